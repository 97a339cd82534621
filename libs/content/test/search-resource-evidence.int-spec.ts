import { ContentSubjects } from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { SearchMemoryService } from '../src/search/memory/search-memory.service';
import { BM25 } from '../src/search/query/retrievers';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Paragraph = { score: number; score_type: string; order: number; text: string };
type FindResult = {
  resources: Record<string, { fields: Record<string, { paragraphs: Record<string, Paragraph> }> }>;
  best_matches: string[];
  metrics: Record<string, number> | null;
};

/**
 * A resource is ranked on all of its evidence (query/retrievers.ts, keywordSearch): a query whose
 * words are split between a resource's title and its body finds that resource before one whose
 * single paragraph holds fewer of them, on the memory index and on SQL alike, and the resource's
 * share stays right as its fields are added, changed and deleted.
 */
describe('keyword search with the evidence of the whole resource', () => {
  let fx: SearchFixture;
  let memory: SearchMemoryService;
  const kbid = '00000000-0000-4000-8000-00000000e021';
  const query = 'vitamin fractures elderly';
  let split = ''; // "vitamin" in its title, "fractures elderly" in its body
  let single = ''; // "vitamin fractures" in its body only

  const find = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.find, {
      kbid,
      body: { features: ['keyword'], reranker: 'noop', top_k: 20, debug: true, ...body },
    }) as Promise<FindResult>;
  const viaSql = async (body: Record<string, unknown>): Promise<FindResult> => {
    const current = memory.current.bind(memory);
    memory.current = async () => undefined;
    try {
      return await find(body);
    } finally {
      memory.current = current;
    }
  };
  const paragraphs = (r: FindResult) =>
    Object.values(r.resources).flatMap((res) => Object.values(res.fields).flatMap((f) => Object.entries(f.paragraphs)));
  const scoreOf = (r: FindResult, pid: string) => paragraphs(r).find(([id]) => id === pid)?.[1].score;
  const ridOf = (pid: string) => pid.split('/')[0] as string;
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  /** The memory index answers (it is current), and the same as SQL: ids in order, scores to float precision. */
  const answer = async (body: Record<string, unknown> = {}): Promise<FindResult> => {
    await eventually(async () => ((await memory.build(kbid)) ? true : undefined), 10_000, 'memory index built');
    const m = await find({ query, ...body });
    expect(m.metrics?.['memory_index']).toBe(1);
    const s = await viaSql({ query, ...body });
    expect(s.metrics?.['memory_index']).toBe(0);
    expect(m.best_matches).toEqual(s.best_matches);
    for (const pid of m.best_matches) expect(close(scoreOf(m, pid)!, scoreOf(s, pid)!)).toBe(true);
    return m;
  };

  beforeAll(async () => {
    fx = await startSearchFixture();
    memory = fx.get(SearchMemoryService);
    split = await fx.addResource(kbid, { title: 'Vitamin D' }, 'Fractures in elderly patients.');
    single = await fx.addResource(kbid, { title: 'Cohort study' }, 'Vitamin intake and fractures among adults.');
    // "elderly" is common, so it weighs little: on its paragraphs alone `single` would win.
    for (let i = 0; i < 6; i++) await fx.addResource(kbid, { title: `Care note ${i}` }, `Elderly care home visit number ${i}.`);
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('ranks the resource whose title and body share the query words first, and still returns its best paragraphs with their scores', async () => {
    expect(BM25.resource).toBeGreaterThan(0);
    expect(BM25.resource).toBeLessThan(1);
    const r = await answer();
    expect(ridOf(r.best_matches[0]!)).toBe(split);
    expect(r.best_matches.map(ridOf)).toContain(single);
    const [own, title] = r.best_matches.filter((pid) => ridOf(pid) === split);
    // the body holds two query words, the title one: the body comes first within the resource
    expect(own).toContain('/t/body/');
    expect(title).toContain('/a/title/');
    expect(scoreOf(r, own!)!).toBeGreaterThan(scoreOf(r, title!)!);
    // Neither paragraph of `split` would beat `single` on its own: `split` holds each query word in
    // one paragraph only, so its R is the sum of its paragraphs' BM25, score_body = B_body + λ·B_title
    // and score_title = B_title + λ·B_body; solved for B_body and B_title.
    const lambda = BM25.resource;
    const [sb, st] = [scoreOf(r, own!)!, scoreOf(r, title!)!];
    const bBody = (sb - lambda * st) / (1 - lambda * lambda);
    const bTitle = (st - lambda * sb) / (1 - lambda * lambda);
    const singleBody = r.best_matches.find((pid) => ridOf(pid) === single)!;
    const singleScore = scoreOf(r, singleBody)!;
    expect(Math.max(bBody, bTitle)).toBeLessThan(singleScore);
    expect(bTitle).toBeGreaterThan(0);
    // A query word in one paragraph of each resource: every resource share is that paragraph's BM25,
    // every score is the paragraph's own BM25.
    const vitamin = await find({ query: 'vitamin' });
    expect(vitamin.best_matches.map(ridOf).sort()).toEqual([split, single].sort());
    // (the title's score for "vitamin" alone is its own BM25 for that word: the bTitle solved for above)
    expect(close(scoreOf(vitamin, title!)!, bTitle)).toBe(true);
  });

  it('keeps the resource share right as a field is added, changed and deleted (memory index from the change log, and SQL)', async () => {
    const before = await answer();
    const singleBody = before.best_matches.find((pid) => ridOf(pid) === single)!;
    const initial = scoreOf(before, singleBody)!;

    // A second field holding the missing word (and one more): `single` now has all three words and comes first.
    await fx.putText(kbid, single, 'extra', 'Fractures in the elderly');
    const added = await answer();
    // (brought up to date from the change log, not read again in full)
    expect(memory.stats().kbs.find((k) => k.kbid === kbid)?.appended).toBeGreaterThan(0);
    expect(ridOf(added.best_matches[0]!)).toBe(single);
    expect(scoreOf(added, singleBody)!).toBeGreaterThan(initial);

    // Changed to words the query does not hold: back behind `split`.
    await fx.putText(kbid, single, 'extra', 'Unrelated appendix');
    const changed = await answer();
    expect(ridOf(changed.best_matches[0]!)).toBe(split);
    expect(changed.best_matches.some((pid) => pid.includes('/t/extra/'))).toBe(false);

    // Deleted: the KB is as it was, and so is every score.
    await fx.bus.request(ContentSubjects.deleteField, { kbid, rid: single, field_type: 'text', field_id: 'extra' });
    await eventually(
      async () => {
        const rows = (await fx.ds.query(`SELECT count(*)::int AS n FROM content.search_paragraphs WHERE rid = $1 AND field = 't/extra'`, [
          single,
        ])) as { n: number }[];
        return rows[0]?.n === 0 ? true : undefined;
      },
      10_000,
      'the field unindexed',
    );
    const after = await answer();
    expect(after.best_matches).toEqual(before.best_matches);
    for (const pid of before.best_matches) expect(close(scoreOf(after, pid)!, scoreOf(before, pid)!)).toBe(true);
  });

  it('scores a paragraph the same under a filter: filters choose paragraphs, the resource share reads them all', async () => {
    const all = await answer();
    const body = all.best_matches.find((pid) => ridOf(pid) === split && pid.includes('/t/body/'))!;
    const onlyBodies = await answer({ fields: ['t/body'] });
    expect(onlyBodies.best_matches.every((pid) => pid.includes('/t/body/'))).toBe(true);
    expect(close(scoreOf(onlyBodies, body)!, scoreOf(all, body)!)).toBe(true);
    expect(ridOf(onlyBodies.best_matches[0]!)).toBe(split);
  });
});
