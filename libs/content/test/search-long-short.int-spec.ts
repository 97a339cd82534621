import { ContentSubjects } from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { SearchMemoryService } from '../src/search/memory/search-memory.service';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Paragraph = { score: number };
type FindResult = {
  resources: Record<string, { fields: Record<string, { paragraphs: Record<string, Paragraph> }> }>;
  best_matches: string[];
  metrics: Record<string, number> | null;
};

/**
 * A KB mixing long and short resources (issue 21 item 2; the reference SDK's e2e case that reverted
 * the first attempt at ranking resources on all their evidence, docs/benchmarks.md): a short
 * resource titled "Volcanoes and lava" and two texts of 12 short "lava" paragraphs each. The short
 * resource's title must stay among the best paragraphs of `find('lava')`: a long resource's many
 * matching paragraphs must not take the whole `top_k`. The memory index and SQL answer alike.
 */
describe('keyword search over long and short resources', () => {
  let fx: SearchFixture;
  let memory: SearchMemoryService;
  const kbid = '00000000-0000-4000-8000-00000000e022';
  let short = '';
  const long: string[] = [];

  const find = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.find, { kbid, body: { top_k: 20, debug: true, ...body } }) as Promise<FindResult>;
  const viaSql = async (body: Record<string, unknown>): Promise<FindResult> => {
    const current = memory.current.bind(memory);
    memory.current = async () => undefined;
    try {
      return await find(body);
    } finally {
      memory.current = current;
    }
  };
  const scores = (r: FindResult) =>
    new Map(Object.values(r.resources).flatMap((res) => Object.values(res.fields).flatMap((f) => Object.entries(f.paragraphs))));
  const ridOf = (pid: string) => pid.split('/')[0] as string;
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  /** From the memory index (current) and on SQL: the same paragraphs in the same order, the same scores. */
  const answer = async (body: Record<string, unknown>): Promise<FindResult> => {
    await eventually(async () => ((await memory.build(kbid)) ? true : undefined), 10_000, 'memory index built');
    const m = await find(body);
    expect(m.metrics?.['memory_index']).toBe(1);
    const s = await viaSql(body);
    expect(s.metrics?.['memory_index']).toBe(0);
    expect(m.best_matches).toEqual(s.best_matches);
    const [ms, ss] = [scores(m), scores(s)];
    for (const pid of m.best_matches) expect(close(ms.get(pid)!.score, ss.get(pid)!.score)).toBe(true);
    return m;
  };

  beforeAll(async () => {
    fx = await startSearchFixture();
    memory = fx.get(SearchMemoryService);
    short = await fx.addResource(kbid, { title: 'Volcanoes and lava' }, 'Eruptions are loud.');
    for (const name of ['north', 'south']) {
      const text = Array.from({ length: 12 }, (_, i) => `Sentence ${i} of the ${name} notes tells how lava cools into basalt columns.`);
      long.push(await fx.addResource(kbid, { title: `Field notes ${name}` }, text.join('\n\n')));
    }
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('keeps the short resource first and every resource among the best paragraphs (keyword)', async () => {
    const r = await answer({ query: 'lava', features: ['keyword'], reranker: 'noop' });
    // 1 title + 24 long paragraphs match; the top 20 hold all three resources, the short title first
    expect(r.best_matches).toHaveLength(20);
    expect(r.best_matches[0]).toContain(`${short}/a/title/`);
    expect(new Set(r.best_matches.map(ridOf))).toEqual(new Set([short, ...long]));
    // a long resource's paragraphs score as paragraphs: its many matches lift none of them
    const s = scores(r);
    const longScores = r.best_matches.filter((pid) => ridOf(pid) !== short).map((pid) => s.get(pid)!.score);
    expect(Math.max(...longScores)).toBeLessThan(s.get(r.best_matches[0]!)!.score);
  });

  it('answers a query no paragraph matches with nothing, and a query only the short resource matches with it alone', async () => {
    expect((await answer({ query: 'obsidian', features: ['keyword'] })).best_matches).toEqual([]);
    const only = await answer({ query: 'volcanoes', features: ['keyword'], reranker: 'noop' });
    expect(only.best_matches.map(ridOf)).toEqual([short]);
  });
});
