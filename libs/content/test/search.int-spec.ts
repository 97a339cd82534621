import type { DataSource } from 'typeorm';
import { ContentSubjects, DomainError, UnderstandingSubjects } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { eventually } from '@kb/platform/testing';
import { startSearchFixture, toyEmbed, TOY_VECTORSET, type SearchFixture } from './fixtures/search.fixture';
import { CANDIDATES, EXACT_SCAN_LIMIT, keywordSearch, semanticSearch } from '../src/search/query/retrievers';
import { SqlParams } from '../src/search/query/sql';
import { FindService } from '../src/search/find.service';
import { SearchListsService } from '../src/search/search-lists.service';

interface FindResults {
  resources: Record<
    string,
    {
      id: string;
      title?: string;
      fields: Record<string, { paragraphs: Record<string, { score: number; score_type: string; order: number; text: string }> }>;
    }
  >;
  best_matches: string[];
  min_score: { semantic: number; bm25: number };
}

describe('search engine (PGlite with pgvector, in-process bus)', () => {
  let fx: SearchFixture;
  let ds: DataSource;
  let bus: MessageBus;
  const kbid = '00000000-0000-4000-8000-0000000000aa';
  const otherKb = '00000000-0000-4000-8000-0000000000bb';

  beforeAll(async () => {
    fx = await startSearchFixture();
    ds = fx.ds;
    bus = fx.bus;
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const addResource = (
    body: Record<string, unknown>,
    text: string,
    o: { kb?: string; ner?: Record<string, string>; summary?: string } = {},
  ) => fx.addResource(o.kb ?? kbid, body, text, o);

  const find = (body: Record<string, unknown>, kb = kbid) =>
    bus.request(ContentSubjects.find, { kbid: kb, body }) as unknown as Promise<FindResults>;
  const ridsOf = (r: FindResults) => [...new Set(r.best_matches.map((id) => id.split('/')[0]))];

  let tides: string;
  let volcano: string;
  let secret: string;
  let hidden: string;
  let labelled: string;

  beforeAll(async () => {
    tides = await addResource(
      { title: 'Ocean tides', slug: 'tides' },
      'The moon pulls the oceans and causes the tides.\n\nSpring tides happen at full moon.',
    );
    volcano = await addResource(
      { title: 'Volcanoes', slug: 'volcano' },
      'A volcano erupts when magma rises.\n\nLava flows destroyed the village.',
      { ner: { 'Mount Etna': 'PLACE' } },
    );
    secret = await addResource(
      { title: 'Secret plans', slug: 'secret', security: { access_groups: ['board'] } },
      'The merger with the moon mining company closes in March.',
    );
    hidden = await addResource({ title: 'Hidden note', slug: 'hidden', hidden: true }, 'Hidden moon base coordinates.');
    labelled = await addResource(
      { title: 'Labelled', slug: 'labelled', usermetadata: { classifications: [{ labelset: 'topic', label: 'astronomy' }] } },
      'Telescopes observe the moon craters.',
    );
    await addResource({ title: 'Other KB' }, 'The moon in another knowledge box.', { kb: otherKb });
  }, 60_000);

  it('ranks by BM25 with stemming, and keeps other KBs, hidden and grouped resources out', async () => {
    const r = await find({ query: 'tide', features: ['keyword'], reranker: 'noop' });
    expect(ridsOf(r)[0]).toBe(tides);
    const first = r.resources[tides]?.fields['/t/body']?.paragraphs;
    expect(Object.values(first ?? {}).every((p) => p.score_type === 'BM25')).toBe(true);
    // The default reranker (predict) scored them: they say so.
    const reranked = await find({ query: 'tide', features: ['keyword'] });
    expect(ridsOf(reranked)[0]).toBe(tides);
    expect(Object.values(reranked.resources[tides]?.fields['/t/body']?.paragraphs ?? {}).every((p) => p.score_type === 'RERANKER')).toBe(
      true,
    );
    const moon = await find({ query: 'moon', features: ['keyword'], top_k: 50 });
    expect(ridsOf(moon)).toEqual(expect.arrayContaining([tides, labelled]));
    expect(ridsOf(moon)).not.toContain(hidden);
    expect(ridsOf(moon)).toContain(secret); // no groups asked and the KB does not enforce security: public search
    const withGroups = await find({ query: 'moon', features: ['keyword'], top_k: 50, security: { groups: ['staff'] } });
    expect(ridsOf(withGroups)).not.toContain(secret);
    const board = await find({ query: 'moon', features: ['keyword'], top_k: 50, security: { groups: ['board'] } });
    expect(ridsOf(board)).toContain(secret);
    expect(ridsOf(await find({ query: 'moon', features: ['keyword'], show_hidden: true, top_k: 50 }))).toContain(hidden);
  });

  it('scores Okapi BM25 exactly (k1 1.2, b 0.75, the KB statistics), honouring a bm25 minimum', async () => {
    const terms = ['moon', 'tide'];
    const [stats] = (await ds.query(
      `SELECT paragraphs::float8 AS n, total_length::float8 / paragraphs AS avgdl FROM content.search_stats WHERE kbid = $1`,
      [kbid],
    )) as { n: number; avgdl: number }[];
    const postings = (await ds.query(
      `SELECT po.paragraph::text AS id, po.tf, p.length, t.df FROM content.search_postings po
         JOIN content.search_paragraphs p ON p.id = po.paragraph JOIN content.search_terms t ON t.kbid = po.kbid AND t.term = po.term
        WHERE po.kbid = $1 AND po.term = ANY($2::text[]) AND NOT p.hidden`,
      [kbid, terms],
    )) as { id: string; tf: number; length: number; df: number }[];
    const expected = new Map<string, number>();
    for (const x of postings) {
      const idf = Math.log(1 + (stats!.n - x.df + 0.5) / (x.df + 0.5));
      expected.set(
        x.id,
        (expected.get(x.id) ?? 0) + (idf * x.tf * 2.2) / (x.tf + 1.2 * (1 - 0.75 + (0.75 * x.length) / Math.max(stats!.avgdl, 1))),
      );
    }
    const hits = await keywordSearch(ds.manager, { kbid, where: 'NOT p.hidden', params: new SqlParams() }, terms, 100, 0);
    expect(hits.map((h) => h.id).sort()).toEqual([...expected.keys()].sort());
    for (const h of hits) expect(h.score).toBeCloseTo(expected.get(h.id)!, 9);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
    // A filter that only the weakest match passes: the best candidates all fail it, and the exact
    // query (filters on every posting) still finds it, with the same score.
    const weakest = hits[hits.length - 1]!;
    expect(hits.length).toBeGreaterThan(CANDIDATES);
    const params = new SqlParams();
    const only = await keywordSearch(
      ds.manager,
      { kbid, where: `NOT p.hidden AND p.id = ${params.add(weakest.id)}::bigint`, params },
      terms,
      1,
      0,
    );
    expect(only).toEqual([weakest]);
    const none = new SqlParams();
    expect(await keywordSearch(ds.manager, { kbid, where: `p.id = ${none.add('-1')}::bigint`, params: none }, terms, 1, 0)).toEqual([]);
    expect(await keywordSearch(ds.manager, { kbid, where: 'NOT p.hidden', params: new SqlParams() }, ['nosuchterm'], 5, 0)).toEqual([]);
    const cut = hits[1]!.score;
    const above = await keywordSearch(ds.manager, { kbid, where: 'NOT p.hidden', params: new SqlParams() }, terms, 100, cut);
    expect(above.map((h) => h.id)).toEqual(hits.filter((h) => h.score >= cut).map((h) => h.id));
  });

  it('matches titles as their own paragraphs', async () => {
    const r = await find({ query: 'volcanoes', features: ['keyword'] });
    expect(r.best_matches.some((id) => id.startsWith(`${volcano}/a/title/`))).toBe(true);
  });

  it('finds by meaning with the KB model, and fuses keyword and semantic hits', async () => {
    const sem = await find({ query: 'magma lava village', features: ['semantic'] });
    expect(ridsOf(sem)[0]).toBe(volcano);
    expect(sem.min_score.semantic).toBe(0.1);
    const hybrid = await find({ query: 'moon tides', reranker: 'noop' });
    expect(ridsOf(hybrid)[0]).toBe(tides);
    const both = Object.values(hybrid.resources[tides]?.fields['/t/body']?.paragraphs ?? {});
    expect(both.some((p) => p.score_type === 'BOTH')).toBe(true);
    // order follows best_matches
    const orders = hybrid.best_matches.map((id) => {
      const rid = id.split('/')[0] as string;
      const fieldKey = `/${id.split('/').slice(1, 3).join('/')}`;
      return hybrid.resources[rid]?.fields[fieldKey]?.paragraphs[id]?.order;
    });
    expect(orders).toEqual(orders.map((_, i) => i));
  });

  it('filters by label, field, entity and with and/or/not, also under semantic search', async () => {
    const byLabel = await find({
      query: 'moon',
      top_k: 50,
      filter_expression: { field: { prop: 'label', labelset: 'topic', label: 'astronomy' } },
    });
    expect(ridsOf(byLabel)).toEqual([labelled]);
    const legacy = await find({ query: 'moon', top_k: 50, filters: ['/l/topic'] });
    expect(ridsOf(legacy)).toEqual([labelled]);
    const notLabel = await find({
      query: 'moon',
      top_k: 50,
      features: ['keyword'],
      filter_expression: { field: { not: { prop: 'label', labelset: 'topic' } } },
    });
    expect(ridsOf(notLabel)).not.toContain(labelled);
    const entity = await find({ query: 'lava', filter_expression: { field: { prop: 'entity', subtype: 'PLACE', value: 'Mount Etna' } } });
    expect(ridsOf(entity)).toEqual([volcano]);
    const titles = await find({ query: 'volcanoes', features: ['keyword'], fields: ['a/title'] });
    expect(titles.best_matches.every((id) => id.includes('/a/title/'))).toBe(true);
    const or = await find({
      query: 'moon',
      top_k: 50,
      features: ['keyword'],
      filter_expression: {
        field: {
          or: [
            { prop: 'resource', slug: 'tides' },
            { prop: 'resource', id: labelled },
          ],
        },
      },
    });
    expect(ridsOf(or).sort()).toEqual([tides, labelled].sort());
    // A selective filter still fills top_k from the semantic leg when matches exist.
    const selective = await find({
      query: 'anything at all',
      features: ['semantic'],
      min_score: -1,
      top_k: 5,
      filter_expression: { field: { prop: 'resource', slug: 'tides' } },
    });
    // Both body paragraphs of the one matching resource (titles carry no vector).
    expect(selective.best_matches.length).toBe(2);
    expect(ridsOf(selective)).toEqual([tides]);
  });

  it('reranks the returned paragraphs with predict (the default), keeps the fused order with noop', async () => {
    const kb = '00000000-0000-4000-8000-0000000000ab';
    // Both hold each word once; BM25 prefers the shorter, whose words are apart; the longer holds the phrase.
    const scattered = await addResource({ title: 'Scattered' }, 'Spring brings rain while tides follow the moon each day.', { kb });
    const phrase = await addResource({ title: 'Phrase' }, 'Spring tides follow the moon when the sun lines up with it twice monthly.', {
      kb,
    });
    const body = { query: 'spring tides', features: ['keyword'], top_k: 2 };
    const noop = await find({ ...body, reranker: 'noop' }, kb);
    expect(ridsOf(noop)).toEqual([scattered, phrase]);
    const predicted = await find(body, kb);
    expect(ridsOf(predicted)).toEqual([phrase, scattered]);
    expect(ridsOf(await find({ ...body, reranker: { name: 'predict', window: 2 } }, kb))).toEqual([phrase, scattered]);
    // The window may not be shorter than top_k.
    await expect(find({ ...body, reranker: { name: 'predict', window: 1 } }, kb)).rejects.toMatchObject({
      details: { detail: [expect.objectContaining({ loc: ['body', 'reranker', 'window'] })] },
    });
  });

  it("reranks with the cross-encoder's scores (understanding.query.rerank), passes its refusal on, and scores a window in one call", async () => {
    const kb = '00000000-0000-4000-8000-0000000000e1';
    const apples = await addResource({ title: 'Apples' }, 'Orchard apples ripen in the autumn orchard.', { kb });
    const pears = await addResource({ title: 'Pears' }, 'Pears ripen too.', { kb });
    // A stand-in for the understanding service's model: pears are what it finds relevant.
    const calls: { query: string; texts: string[] }[] = [];
    let refuse = false;
    await bus.handle(UnderstandingSubjects.rerank, async (req) => {
      calls.push(req);
      if (refuse)
        throw DomainError.validation([{ loc: ['body', 'reranker'], msg: 'not configured (RERANKER_MODEL_DIR)', type: 'value_error' }]);
      return { model: 'tiny', scores: req.texts.map((t) => (/pears/i.test(t) ? 0.9 : 0.1)) };
    });
    const body = { query: 'orchard ripen', features: ['keyword'], top_k: 2 };
    expect(ridsOf(await find({ ...body, reranker: 'noop' }, kb))).toEqual([apples, pears]);
    expect(calls).toHaveLength(0);
    const crossed = await find({ ...body, reranker: 'cross-encoder' }, kb);
    expect(ridsOf(crossed)).toEqual([pears, apples]);
    const scores = Object.values(crossed.resources[pears]?.fields['/t/body']?.paragraphs ?? {});
    expect(scores.map((p) => [p.score, p.score_type])).toEqual([[0.9, 'RERANKER']]);
    expect(calls[0]).toEqual({ query: 'orchard ripen', texts: expect.arrayContaining(['Pears ripen too.']) });
    // A window larger than top_k is scored in one call.
    calls.length = 0;
    await find({ ...body, reranker: { name: 'cross-encoder', window: 4 } }, kb);
    expect(calls).toHaveLength(1);
    // Not configured there: its 422 reaches the caller as it is.
    refuse = true;
    await expect(find({ ...body, reranker: 'cross-encoder' }, kb)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { detail: [expect.objectContaining({ loc: ['body', 'reranker'], msg: expect.stringContaining('RERANKER_MODEL_DIR') })] },
    });
    // The default path never asks the model.
    calls.length = 0;
    expect(ridsOf(await find(body, kb))).toHaveLength(2);
    expect(calls).toHaveLength(0);
    await expect(find({ ...body, reranker: 'cross_encoder' }, kb)).rejects.toMatchObject({
      details: { detail: [expect.objectContaining({ loc: ['body', 'reranker'], msg: expect.stringContaining("'cross-encoder'") })] },
    });
  });

  it("gives a resource its fields' summary when the user wrote none, and never replaces the user's", async () => {
    const kb = '00000000-0000-4000-8000-0000000000ac';
    const get = async (rid: string) =>
      (await bus.request(ContentSubjects.getResource, { kbid: kb, rid })) as unknown as {
        summary: string;
        computedmetadata?: Record<string, unknown>;
      };
    const auto = await addResource({ title: 'Auto' }, 'The moon pulls the sea. Tides follow.', { kb, summary: 'The moon pulls the sea.' });
    expect(await get(auto)).toMatchObject({ summary: 'The moon pulls the sea.' });
    expect((await get(auto)).computedmetadata).not.toHaveProperty('summary_generated');
    const own = await addResource({ title: 'Own', summary: 'Written by hand.' }, 'Other text here.', { kb, summary: 'Other text here.' });
    expect((await get(own)).summary).toBe('Written by hand.');
  });

  it('answers every mistake at once with 422 and its location', async () => {
    const err = await find({
      query: 5,
      top_k: 500,
      features: ['keyword', 'graph'],
      bogus: 1,
      filter_expression: { field: { prop: 'nope' } },
    } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    const locs = ((err as DomainError).details?.['detail'] as { loc: string[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining(['body.query', 'body.top_k', 'body.graph_query', 'body.bogus', 'body.filter_expression.field.prop']),
    );
  });

  it('removes a deleted resource from the index, with its term statistics', async () => {
    const temp = await addResource({ title: 'Zanzibar' }, 'Quokkas are marsupials.');
    expect(ridsOf(await find({ query: 'quokka', features: ['keyword'] }))).toEqual([temp]);
    await bus.request(ContentSubjects.deleteResource, { kbid, rid: temp });
    expect((await find({ query: 'quokka', features: ['keyword'] })).best_matches).toEqual([]);
    const rows = (await ds.query(`SELECT count(*)::int AS n FROM content.search_terms WHERE kbid = $1 AND term LIKE 'quokka%'`, [
      kbid,
    ])) as { n: number }[];
    expect(rows[0]?.n).toBe(0);
    const orphans = (await ds.query(`SELECT count(*)::int AS n FROM content.search_paragraphs WHERE rid = $1`, [temp])) as { n: number }[];
    expect(orphans[0]?.n).toBe(0);
  });

  it('re-indexes a changed title and security groups without reprocessing', async () => {
    await bus.request(ContentSubjects.modifyResource, {
      kbid,
      rid: labelled,
      body: { title: 'Lunar telescopes', security: { access_groups: ['astro'] } },
    });
    const r = await find({ query: 'lunar', features: ['keyword'], security: { groups: ['other'] } });
    expect(ridsOf(r)).not.toContain(labelled);
    const ok = await find({ query: 'lunar', features: ['keyword'], security: { groups: ['astro'] } });
    expect(ridsOf(ok)).toEqual([labelled]);
  });

  it('rebuilds a resource index from its stored fields on reindex', async () => {
    await ds.query(`DELETE FROM content.search_paragraphs WHERE rid = $1`, [volcano]);
    expect(ridsOf(await find({ query: 'magma', features: ['keyword'] }))).not.toContain(volcano);
    await bus.request(ContentSubjects.reindexResource, { kbid, rid: volcano, reindex_vectors: false });
    await eventually(
      async () => (ridsOf(await find({ query: 'magma', features: ['keyword'] })).includes(volcano) ? true : undefined),
      10_000,
      'reindexed',
    );
    expect(ridsOf(await find({ query: 'magma lava village', features: ['semantic'] }))[0]).toBe(volcano);
  });

  it('answers from the HNSW index (iterative scan) for large vectorsets, also under a selective filter', async () => {
    const params = new SqlParams([kbid, tides]);
    const scope = { kbid, where: 'p.kbid = $1 AND p.rid = $2::uuid', params };
    const hits = await semanticSearch(ds.manager, scope, {
      vector: toyEmbed('spring tides full moon'),
      vectorset: TOY_VECTORSET,
      similarity: 'DOT',
      minScore: -1,
      limit: 5,
      population: EXACT_SCAN_LIMIT + 1,
    });
    expect(hits.length).toBe(2);
    const exact = await semanticSearch(
      ds.manager,
      { kbid, where: 'p.kbid = $1 AND p.rid = $2::uuid', params: new SqlParams([kbid, tides]) },
      { vector: toyEmbed('spring tides full moon'), vectorset: TOY_VECTORSET, similarity: 'DOT', minScore: -1, limit: 5, population: 1 },
    );
    expect(hits.map((h) => h.id)).toEqual(exact.map((h) => h.id));
  });

  it('stops /find and /search once nobody waits for the answer (the handler signal is aborted)', async () => {
    await addResource({ title: 'Signals' }, 'Signals stop the search.');
    const body = { query: 'signals', features: ['keyword' as const] };
    expect((await fx.get(FindService).find({ kbid, body })).best_matches).not.toEqual([]);
    const gone = AbortSignal.abort();
    await expect(fx.get(FindService).find({ kbid, body, signal: gone })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(fx.get(SearchListsService).search({ kbid, body, signal: gone })).rejects.toMatchObject({ name: 'AbortError' });
    // The query embedding is a bus call of its own: it is cancelled too.
    await expect(
      fx.get(FindService).find({ kbid, body: { query: 'signals', features: ['semantic'] }, signal: gone }),
    ).rejects.toMatchObject({ details: { cancelled: true } });
  });
});
