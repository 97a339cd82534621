import { ContentSubjects } from '@kb/contracts';
import { createLogger } from '@kb/platform/observability';
import { SearchMemoryService } from '../src/search/memory/search-memory.service';
import { memoryKeywordSearch, memorySemanticSearch } from '../src/search/memory/memory-retrievers';
import { keywordSearch, semanticSearch } from '../src/search/query/retrievers';
import { SqlParams } from '../src/search/query/sql';
import { VectorsetsService } from '../src/processing/vectorsets.service';
import { SearchMaintenanceService } from '../src/search/index/search-maintenance.service';
import { FindService } from '../src/search/find.service';
import { FindPlanner } from '../src/search/find/find-plan';
import { startSearchFixture, toyEmbed, TOY_VECTORSET, type SearchFixture } from './fixtures/search.fixture';

/**
 * Equal, numbers to float precision: BM25 sums a paragraph's terms in the order PostgreSQL's plan
 * visits them, which a bigger KB can change, so the last bit of a sum may differ (never the order of
 * paragraphs whose scores differ by more than that). Arrays are compared in order (rankings are
 * arrays: best_matches, paragraph lists); the members of an object are not — a JSON object has no
 * order, and the `resources` map of two equal answers may be filled in another order when two
 * resources tie (fresh-clone CI failed once on exactly that, with every value equal).
 */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (Array.isArray(a) || Array.isArray(b)) return false;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      ka.length === kb.length &&
      ka.every((k, i) => k === kb[i] && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

/**
 * Same hits in the same order, scores to float precision — except that paragraphs whose scores tie
 * (to float precision) may come in another order, and a tie cut by the limit may keep others:
 * PostgreSQL breaks such ties by the last bit its plan's addition order left, the memory index by id.
 */
function sameRanking(a: { id: string; score: number }[], b: { id: string; score: number }[], limit: number): boolean {
  if (a.length !== b.length) return false;
  const runs = (x: { id: string; score: number }[]) => {
    const out: { score: number; ids: string[] }[] = [];
    for (const h of x) {
      const last = out[out.length - 1];
      if (last && same(last.score, h.score)) last.ids.push(h.id);
      else out.push({ score: h.score, ids: [h.id] });
    }
    return out;
  };
  const ra = runs(a);
  const rb = runs(b);
  if (ra.length !== rb.length) return false;
  return ra.every((r, i) => {
    const o = rb[i]!;
    if (!same(r.score, o.score) || r.ids.length !== o.ids.length) return false;
    const cut = i === ra.length - 1 && a.length === limit;
    return cut || [...r.ids].sort().join() === [...o.ids].sort().join();
  });
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = [
  'apollo',
  'budget',
  'contract',
  'delta',
  'merger',
  'orbit',
  'payroll',
  'quarter',
  'rocket',
  'salary',
  'tariff',
  'vendor',
  'lunar',
  'ocean',
];
const GROUPS = ['g1', 'g2', 'g3'];

type FindBody = Record<string, unknown>;
type FindResult = { resources: Record<string, unknown>; best_matches: string[]; metrics: Record<string, number> | null };

/**
 * The search index held in memory answers exactly what the SQL statements answer — the same
 * paragraphs, scores and order, under every filter, security group, hidden flag and option — and is
 * never used once the database's index has changed (writes here, or by another replica).
 */
describe('search index in memory', () => {
  let fx: SearchFixture;
  let memory: SearchMemoryService;
  const kbid = '00000000-0000-4000-8000-00000000a001';
  const rids: string[] = [];
  const rnd = prng(7);

  const find = (body: FindBody) => fx.bus.request(ContentSubjects.find, { kbid, body: { ...body, debug: true } }) as Promise<FindResult>;
  /** The same request on the SQL path (the memory index withheld). */
  const viaSql = async (body: FindBody): Promise<FindResult> => {
    const current = memory.current.bind(memory);
    memory.current = async () => undefined;
    try {
      return await find(body);
    } finally {
      memory.current = current;
    }
  };
  const strip = (r: FindResult) => ({ ...r, metrics: null });
  const text = (i: number) => {
    const words = WORDS.filter(() => rnd() < 0.35);
    if (words.length === 0) words.push(WORDS[i % WORDS.length] as string);
    const para = `${words.join(' ')} report ${i}`;
    // a repeated paragraph now and then, for with_duplicates
    return i % 5 === 0
      ? `${para}\n\n${words.slice().reverse().join(' ')} notes\n\n${para}`
      : `${para}\n\n${words.slice().reverse().join(' ')} notes`;
  };
  const add = async (i: number) => {
    const groups = GROUPS.filter(() => rnd() < 0.3);
    const origin = { tags: [`tag${i % 4}`], path: `/dir${i % 3}/sub${i % 2}/file${i}`, metadata: { color: ['red', 'blue'][i % 2] } };
    const body = {
      title: `Doc ${WORDS[i % WORDS.length]} ${i}`,
      security: { access_groups: groups },
      origin,
      usermetadata: { classifications: [{ labelset: 'topic', label: `l${i % 3}` }] },
    };
    const rid = await fx.addResource(kbid, body, text(i), {
      language: i % 4 === 1 ? 'es' : 'en',
      ner: i % 3 === 0 ? { Apollo: 'ORG', Houston: 'PLACE' } : { Houston: 'PLACE' },
      ...(i % 5 === 2 ? { field: 'notes' } : {}),
    });
    rids.push(rid);
    return rid;
  };

  beforeAll(async () => {
    fx = await startSearchFixture();
    memory = fx.get(SearchMemoryService);
    for (let i = 0; i < 30; i++) await add(i);
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid: rids[3], body: { hidden: true } });
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid: rids[4], body: { hidden: true } });
    // Creation-date ranges cut through the KB, their bounds exactly at resources' creation times.
    const created = (await fx.ds.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM content.resources WHERE kbid = $1 ORDER BY created_at`,
      [kbid],
    )) as { at: string }[];
    const at = (i: number) => created[i]?.at as string;
    variants.push(
      { filter_expression: { field: { prop: 'created', since: at(15) } } },
      {
        filter_expression: { field: { prop: 'created', since: at(5), until: at(12) } },
        security: { groups: ['g1'] },
        features: ['keyword'],
      },
      {
        filter_expression: {
          field: {
            or: [
              { prop: 'created', until: at(3) },
              { prop: 'label', labelset: 'topic', label: 'l1' },
            ],
          },
        },
        features: ['semantic'],
      },
      { range_creation_start: at(20), filters: ['/l/topic/l2'] },
      { range_creation_end: at(0), show_hidden: true },
    );
  }, 240_000);

  afterAll(async () => {
    await fx?.close();
  });

  const variants: FindBody[] = [
    {},
    { features: ['keyword'] },
    { features: ['semantic'] },
    { top_k: 3 },
    { top_k: 50, with_duplicates: true },
    { security: { groups: ['g1'] } },
    { security: { groups: ['g2', 'g3'] }, features: ['keyword'] },
    { security: { groups: [] } },
    { show_hidden: true },
    { min_score: 0.5 },
    { min_score: { bm25: 1.2, semantic: 0.3 } },
    { rank_fusion: 'rrf' },
    { rank_fusion: { name: 'weighted', boosting: { semantic: 0.3 } } },
    { vectorset: TOY_VECTORSET },
    { filter_expression: { field: { prop: 'label', labelset: 'topic', label: 'l1' } } },
    { filter_expression: { field: { prop: 'label', labelset: 'topic', label: 'l2' } }, security: { groups: ['g1'] }, show_hidden: true },
    { fields: ['a/title'] },
    // filters the memory index decides itself (memory_filter 1)
    { filter_expression: { field: { prop: 'label', labelset: 'topic' } } },
    {
      filter_expression: {
        field: { or: [{ prop: 'label', labelset: 'topic', label: 'l0' }, { not: { prop: 'origin_tag', tag: 'tag1' } }] },
      },
    },
    {
      filter_expression: {
        field: {
          and: [
            { prop: 'language', language: 'es' },
            { prop: 'entity', subtype: 'ORG' },
          ],
        },
      },
    },
    { filter_expression: { paragraph: { prop: 'kind', kind: 'title' } } },
    { filter_expression: { field: { prop: 'origin_path', prefix: 'dir1/sub0' } }, security: { groups: ['g3'] } },
    { filter_expression: { field: { prop: 'origin_metadata', field: 'color', value: 'red' } } },
    { filter_expression: { field: { prop: 'field', type: 'text', name: 'notes' } } },
    { filter_expression: { field: { prop: 'field_mimetype', type: 'text' }, paragraph: { prop: 'kind', kind: 'TITLE' }, operator: 'or' } },
    { filter_expression: { field: { prop: 'language', language: 'es', only_primary: true } } },
    { filters: ['/classification.labels/topic/l2', '/origin.tags/tag2'] },
    { filters: [{ none: ['/l/topic/l1', '/e/PLACE/Houston'] }, { not_all: ['/t/tag0', '/s/p/en'] }] },
    { fields: ['t', 'a/title'] },
    // filters only SQL decides (memory_filter 0: candidates checked in SQL)
    { filter_expression: { field: { prop: 'modified', since: '2000-01-01T00:00:00Z' } } },
    { range_modification_end: '2100-01-01T00:00:00Z', features: ['keyword'] },
    { keyword_filters: ['apollo'], range_modification_start: '2000-01-01T00:00:00Z' },
    // keyword filters and creation dates are decided in memory (more of them once the resources exist: see beforeAll)
    { keyword_filters: ['apollo'] },
    { keyword_filters: ['houston', 'lunar rocket'], features: ['semantic'] },
    { filter_expression: { paragraph: { prop: 'keyword', word: 'notes' } } },
    { filter_expression: { field: { not: { prop: 'keyword', word: 'budget' } } }, security: { groups: ['g1'] } },
    {
      filter_expression: {
        field: {
          or: [
            { prop: 'keyword', word: 'orbit' },
            { prop: 'label', labelset: 'topic', label: 'l2' },
          ],
        },
      },
      show_hidden: true,
    },
    { filter_expression: { field: { prop: 'created', since: '2000-01-01T00:00:00Z' } } },
  ];
  const queries = [
    'apollo',
    'budget contract',
    'orbit rocket lunar',
    'salary payroll quarter tariff',
    'notes',
    'report',
    'ocean vendor merger',
  ];

  async function expectSame(label: string): Promise<void> {
    expect(await memory.build(kbid)).toBeDefined();
    const differences: string[] = [];
    for (const query of queries) {
      for (const v of variants) {
        const body = { query, ...v };
        const m = await find(body);
        if (m.metrics?.['memory_index'] !== 1) differences.push(`${label}: memory index not used for ${JSON.stringify(body)}`);
        const sqlOnly = /"modified"|range_modification/.test(JSON.stringify(v));
        if (m.metrics?.['memory_filter'] !== (sqlOnly ? 0 : 1))
          differences.push(`${label}: memory_filter ${m.metrics?.['memory_filter']} for ${JSON.stringify(body)}`);
        const s = await viaSql(body);
        if (!same(strip(m), strip(s)))
          differences.push(
            `${label}: ${JSON.stringify(body)}\n memory ${JSON.stringify(m.best_matches)}\n sql    ${JSON.stringify(s.best_matches)}`,
          );
      }
    }
    expect(differences).toEqual([]);
  }

  it('answers every query, filter and option exactly as SQL does', async () => {
    await expectSame('initial');
  }, 120_000);

  /** /search and /suggest, each variant from memory and on SQL: the same answers, whole bodies. */
  async function expectSameLists(label: string): Promise<void> {
    const current = memory.current.bind(memory);
    const answered: boolean[] = [];
    memory.current = async (k: string) => {
      const idx = await current(k);
      answered.push(idx !== undefined);
      return idx;
    };
    const ask = (
      subject: typeof ContentSubjects.search | typeof ContentSubjects.suggest,
      body: Record<string, unknown>,
    ): Promise<unknown> =>
      subject === ContentSubjects.search
        ? fx.bus.request(ContentSubjects.search, { kbid, body })
        : fx.bus.request(ContentSubjects.suggest, { kbid, body });
    const withoutMemory = async <T>(run: () => Promise<T>): Promise<T> => {
      const wrapped = memory.current;
      memory.current = async () => undefined;
      try {
        return await run();
      } finally {
        memory.current = wrapped;
      }
    };
    const differences: string[] = [];
    try {
      const searchVariants: Record<string, unknown>[] = [
        {},
        { features: ['keyword', 'semantic'], top_k: 5, offset: 3 },
        { features: ['fulltext'], security: { groups: ['g1'] }, faceted: ['/l/topic', '/e'] },
        { features: ['semantic'], filter_expression: { field: { prop: 'label', labelset: 'topic', label: 'l1' } } },
        { show_hidden: true, min_score: { bm25: 1.2, semantic: 0.3 }, faceted: ['/t', '/e/PLACE/', '/s/p'] },
        {
          features: ['keyword'],
          faceted: ['/l/topic'],
          security: { groups: ['g2'] },
          filter_expression: { field: { prop: 'origin_tag', tag: 'tag1' } },
        },
        { keyword_filters: ['apollo'], faceted: ['/l/topic'] },
        // filters only SQL decides: the candidates, and the facets, in SQL
        { faceted: ['/l/topic'], filter_expression: { field: { prop: 'modified', since: '2000-01-01T00:00:00Z' } } },
      ];
      const suggestVariants: Record<string, unknown>[] = [
        {},
        { security: { groups: ['g1'] } },
        { show_hidden: true },
        { filter_expression: { field: { prop: 'language', language: 'es' } } },
        { filter_expression: { field: { not: { prop: 'entity', subtype: 'ORG' } } } },
      ];
      const requests: [typeof ContentSubjects.search | typeof ContentSubjects.suggest, Record<string, unknown>][] = [];
      for (const query of [...queries, '']) for (const v of searchVariants) requests.push([ContentSubjects.search, { query, ...v }]);
      for (const query of [...queries.map((q) => q.slice(0, -2)), 'hou', 'AP', 'zz'])
        for (const v of suggestVariants) requests.push([ContentSubjects.suggest, { query, ...v }]);
      for (const [subject, body] of requests) {
        answered.length = 0;
        const m = await ask(subject, body);
        // (a /search with no query has nothing to retrieve, and its facets are counted in SQL when the filter is SQL's)
        const sqlOnly = JSON.stringify(body).includes('"modified"');
        if (!answered.includes(true) && (body['query'] !== '' || (body['faceted'] && !sqlOnly)))
          differences.push(`${label}: ${subject.subject}: memory index not used for ${JSON.stringify(body)}`);
        const s = await withoutMemory(() => ask(subject, body));
        if (!same(m, s))
          differences.push(
            `${label}: ${subject.subject} ${JSON.stringify(body)}\n memory ${JSON.stringify(m)}\n sql    ${JSON.stringify(s)}`,
          );
      }
    } finally {
      memory.current = current;
    }
    expect(differences).toEqual([]);
  }

  it('answers /search and /suggest from the memory index, exactly as SQL does', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    await expectSameLists('initial');
  }, 120_000);

  it('decides random filter expressions exactly as SQL does', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    const r = prng(11);
    const pickOne = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)] as T;
    const leaf = (): Record<string, unknown> =>
      pickOne([
        () => ({ prop: 'label', labelset: 'topic', ...(r() < 0.7 ? { label: `l${Math.floor(r() * 4)}` } : {}) }),
        () => ({ prop: 'origin_tag', tag: `tag${Math.floor(r() * 5)}` }),
        () => ({
          prop: 'origin_path',
          ...(r() < 0.8 ? { prefix: pickOne(['dir0', 'dir1/sub1', '/dir2/sub0/file', 'dir2/sub1/file1']) } : {}),
        }),
        () => ({ prop: 'origin_metadata', field: 'color', ...(r() < 0.6 ? { value: pickOne(['red', 'blue', 'green']) } : {}) }),
        () => ({
          prop: 'entity',
          subtype: pickOne(['ORG', 'PLACE', 'PERSON']),
          ...(r() < 0.5 ? { value: pickOne(['Apollo', 'Houston']) } : {}),
        }),
        () => ({ prop: 'language', language: pickOne(['en', 'es']), only_primary: r() < 0.3 }),
        () => ({ prop: 'field', type: pickOne(['text', 'generic']), ...(r() < 0.5 ? { name: pickOne(['body', 'notes', 'title']) } : {}) }),
        () => ({ prop: 'resource', id: pickOne(rids.slice(0, 12)) }),
        () => ({ prop: 'resource', id: pickOne(rids.slice(0, 12)).replace(/-/g, '').toUpperCase() }),
        () => ({ prop: 'field_mimetype', type: 'text', ...(r() < 0.5 ? { subtype: 'plain' } : {}) }),
        () => ({ prop: 'status', status: pickOne(['processed', 'pending']) }),
      ])();
    const expr = (depth: number): Record<string, unknown> => {
      const x = r();
      if (depth === 0 || x < 0.4) return leaf();
      if (x < 0.6) return { not: expr(depth - 1) };
      return { [x < 0.8 ? 'and' : 'or']: Array.from({ length: 2 + Math.floor(r() * 2) }, () => expr(depth - 1)) };
    };
    const differences: string[] = [];
    let nonEmpty = 0;
    for (let i = 0; i < 60; i++) {
      const body = {
        query: pickOne(queries),
        top_k: 50,
        filter_expression: { field: expr(3) },
        ...(r() < 0.3 ? { security: { groups: [pickOne(GROUPS)] } } : {}),
      };
      const m = await find(body);
      if (m.metrics?.['memory_filter'] !== 1) differences.push(`memory filter not used for ${JSON.stringify(body)}`);
      const s = await viaSql(body);
      if (!same(strip(m), strip(s)))
        differences.push(`${JSON.stringify(body)}\n memory ${JSON.stringify(m.best_matches)}\n sql    ${JSON.stringify(s.best_matches)}`);
      if (m.best_matches.length > 0 && m.best_matches.length < 50) nonEmpty++;
    }
    expect(differences).toEqual([]);
    expect(nonEmpty).toBeGreaterThan(20); // the expressions select something, not everything
  }, 120_000);

  it('keeps the SQL contract for selective filters (candidates, exact fallback) at the retriever level', async () => {
    const idx = await memory.build(kbid);
    expect(idx).toBeDefined();
    const scopeFor = (where: string, params: unknown[]) => () => ({ kbid, where, params: new SqlParams(params) });
    const scopes = [
      scopeFor('p.kbid = $1 AND NOT p.hidden', [kbid]),
      scopeFor('p.kbid = $1 AND p.rid = $2::uuid', [kbid, rids[17]]),
      scopeFor(`p.kbid = $1 AND p.field = 'a/title'`, [kbid]),
      scopeFor(`p.kbid = $1 AND p.rid = ANY($2::uuid[])`, [kbid, [rids[1], rids[9], rids[25]]]),
    ];
    for (const scope of scopes) {
      for (const limit of [1, 2, 5, 40]) {
        for (const words of [['apollo'], ['budget', 'orbit', 'note', 'report']]) {
          const terms = words.flatMap((w) => [w, w.replace(/s$/, '')]);
          const a = await memoryKeywordSearch(fx.ds.manager, idx!, scope(), null, terms, limit, 0);
          const b = await keywordSearch(fx.ds.manager, scope(), terms, limit, 0);
          if (!sameRanking(a, b, limit)) expect(a).toEqual(b);
          const q = { vector: toyEmbed(words.join(' ')), vectorset: TOY_VECTORSET, similarity: 'DOT' as const, minScore: 0, limit };
          expect(await memorySemanticSearch(fx.ds.manager, idx!, scope(), null, q)).toEqual(
            await semanticSearch(fx.ds.manager, scope(), { ...q, population: 1 }),
          );
          const qc = { ...q, similarity: 'COSINE' as const, minScore: -1 };
          expect(await memorySemanticSearch(fx.ds.manager, idx!, scope(), null, qc)).toEqual(
            await semanticSearch(fx.ds.manager, scope(), { ...qc, population: 1 }),
          );
        }
      }
    }
  }, 120_000);

  it('applies conditions a caller adds to the plan (as /ask does for a resource or a prefilter)', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    const finder = fx.get(FindService);
    const outcome = async (sql: boolean) => {
      const plan = await fx
        .get(FindPlanner)
        .plan({ kbid, body: { query: 'apollo budget orbit report notes', top_k: 50 } }, { defaultFeatures: ['keyword', 'semantic'] });
      plan.where += ` AND p.rid = ${plan.params.add(rids[11])}::uuid`;
      const current = memory.current.bind(memory);
      if (sql) memory.current = async () => undefined;
      try {
        return await finder.run(plan);
      } finally {
        memory.current = current;
      }
    };
    const m = await outcome(false);
    expect(m.timings['memory_index']).toBe(1);
    expect(new Set(m.paragraphs.map((p) => p.rid))).toEqual(new Set([rids[11]]));
    expect(
      same(
        m.paragraphs.map((p) => [p.id, p.score]),
        (await outcome(true)).paragraphs.map((p) => [p.id, p.score]),
      ),
    ).toBe(true);
  });

  it('brings the index up to date from the change log after every write: the next query sees the write, from memory, as SQL does', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    const probe = { query: 'apollo orbit', top_k: 50 };
    const held = () => memory.stats().kbs.find((k) => k.kbid === kbid)!;
    /** The next query after a write: answered in memory, without the write's victim, equal to SQL. */
    const next = async (body: FindBody, absent?: string) => {
      const m = await find(body);
      expect(m.metrics?.['memory_index']).toBe(1);
      if (absent) expect(Object.keys(m.resources)).not.toContain(absent);
      expect(same(strip(m), strip(await viaSql(body)))).toBe(true);
      return m;
    };

    // a new resource: appended, not read again in full
    const before = held();
    const rid = await add(100);
    const m = await next(probe);
    expect(Object.keys(m.resources)).toContain(rid);
    expect(held().appended).toBeGreaterThan(before.appended);
    expect(held().paragraphs).toBeGreaterThan(before.paragraphs);
    await expectSame('after a new resource');

    // groups and hidden changed: the old paragraphs dead, the new rows appended
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid, body: { security: { access_groups: ['g9'] } } });
    await next({ ...probe, security: { groups: ['g1'] } }, rid);
    expect(held().dead).toBeGreaterThan(before.dead);
    await expectSame('after a groups change');
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid: rids[5], body: { hidden: true } });
    await next(probe, rids[5]);
    await expectSame('after hiding a resource');

    // a deleted resource
    await fx.bus.request(ContentSubjects.deleteResource, { kbid, rid: rids[6] });
    await next(probe, rids[6]);
    await expectSame('after a delete');

    // another replica (or a repair script) writing straight to the index tables
    await fx.ds.query(`UPDATE content.search_paragraphs SET hidden = true WHERE rid = $1`, [rids[7]]);
    await next(probe, rids[7]);
    await expectSame('after a write by another process');

    // several writes between two queries, one of them undone in the same stretch
    const a = await add(101);
    const b = await add(102);
    await fx.bus.request(ContentSubjects.deleteResource, { kbid, rid: a });
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid: b, body: { hidden: true } });
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid: rids[5], body: { hidden: false } });
    await next({ ...probe, show_hidden: true });
    await expectSame('after several writes');
    // facets and entities over an updated index: dead paragraphs left out, appended ones counted
    expect(held().dead).toBeGreaterThan(0);
    expect(held().appended).toBeGreaterThan(0);
    await expectSameLists('after several writes');
  }, 300_000);

  it('reads the KB again in full once a chain of changes is broken, or once updates have fragmented the index', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    // A generation set without a change row (as dropping a vectorset sets it): the chain is broken.
    await fx.ds.query(`UPDATE content.search_stats SET generation = nextval('content.search_generation') WHERE kbid = $1`, [kbid]);
    const m = await find({ query: 'apollo' });
    expect(m.metrics?.['memory_index']).toBe(0);
    await memory.settled(kbid);
    expect(memory.stats().kbs.find((k) => k.kbid === kbid)).toMatchObject({ appended: 0, dead: 0 });

    // Changing most resources' groups leaves more than a fifth of the paragraphs dead: the index is
    // read again in full in the background while the updated one answers.
    for (const rid of rids.slice(8, 20))
      await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid, body: { security: { access_groups: ['g2'] } } });
    const after = await find({ query: 'apollo budget', security: { groups: ['g2'] } });
    expect(after.metrics?.['memory_index']).toBe(1);
    await memory.settled(kbid);
    expect(memory.stats().kbs.find((k) => k.kbid === kbid)).toMatchObject({ appended: 0, dead: 0 });
    await expectSame('after a full read that replaced an updated index');
  }, 120_000);

  it('keeps a full read that writes overtook, brought up to date from the change log', async () => {
    await fx.ds.query(`UPDATE content.search_stats SET generation = nextval('content.search_generation') WHERE kbid = $1`, [kbid]);
    // A write lands while the index is being read: after the read's first chunk of paragraphs (a
    // statement on the same database, as another replica's would be).
    const query = fx.ds.query.bind(fx.ds);
    let wrote = false;
    // (every argument passed on: an EntityManager's query comes here with its transaction's runner)
    fx.ds.query = (async (sql: string, ...rest: unknown[]) => {
      const rows = await (query as (...a: unknown[]) => Promise<unknown>)(sql, ...rest);
      if (!wrote && sql.includes('FROM content.search_paragraphs WHERE kbid = $1 AND id > $2::bigint')) {
        wrote = true;
        await query(`UPDATE content.search_paragraphs SET hidden = NOT hidden WHERE rid = $1`, [rids[9]]);
      }
      return rows;
    }) as typeof fx.ds.query;
    try {
      expect(await memory.build(kbid)).toBeDefined();
    } finally {
      fx.ds.query = query;
    }
    expect(wrote).toBe(true);
    expect(memory.stats().kbs.find((k) => k.kbid === kbid)!.appended).toBeGreaterThan(0);
    await expectSame('after a full read overtaken by writes');
    await fx.ds.query(`UPDATE content.search_paragraphs SET hidden = NOT hidden WHERE rid = $1`, [rids[9]]);
  }, 120_000);

  it('keeps no change older than the maintenance pass allows', async () => {
    await fx.ds.query(`UPDATE content.search_changes SET at = at - interval '1 hour' WHERE kbid = $1`, [kbid]);
    const rows = async () =>
      Number(
        ((await fx.ds.query(`SELECT count(*)::int AS n FROM content.search_changes WHERE kbid = $1`, [kbid])) as { n: number }[])[0]!.n,
      );
    expect(await rows()).toBeGreaterThan(0);
    await fx.get(SearchMaintenanceService).runOnce(true);
    expect(await rows()).toBe(0);
    // an index behind the pruned changes is read again in full
    await add(103);
    expect(await memory.build(kbid)).toBeDefined();
    await expectSame('after the change log was pruned');
  }, 120_000);

  it('forgets a dropped vectorset at once', async () => {
    expect(await memory.build(kbid)).toBeDefined();
    await fx.get(VectorsetsService).onChanged({ kb_id: kbid, removed_vectorset: TOY_VECTORSET } as never);
    const m = await find({ query: 'apollo', features: ['semantic'] });
    expect(m.metrics?.['memory_index']).toBe(0);
    expect(m.best_matches).toEqual([]);
    await expectSame('after a vectorset was dropped');
  }, 120_000);

  it('publishes the search audit events of a burst together, each once', async () => {
    const seen: { type: string; details: { query?: string } }[] = [];
    // The events of requests go out several to a message.
    await fx.bus.subscribe(ContentSubjects.auditBatch, async (b) => void seen.push(...(b.events as never[])));
    await Promise.all(['apollo', 'budget', 'orbit'].map((query) => find({ query: `${query} audit` })));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(
      seen
        .filter((e) => e.type === 'search' && e.details.query?.endsWith(' audit'))
        .map((e) => e.details.query)
        .sort(),
    ).toEqual(['apollo audit', 'budget audit', 'orbit audit']);
  });

  it('leaves KBs above its limits to SQL, evicts the least recently used, and reports what it holds', async () => {
    const stats = memory.stats();
    expect(stats.enabled).toBe(true);
    expect(stats.kbs.map((k) => k.kbid)).toEqual([kbid]);
    const bytes = stats.kbs[0]!.bytes;
    expect(bytes).toBeGreaterThan(0);
    const other = '00000000-0000-4000-8000-00000000a002';
    await fx.addResource(other, { title: 'Other' }, 'apollo budget report\n\nmore notes');
    const logger = createLogger({ service: 'test', level: 'silent' });
    const options = (searchMemory: { budgetBytes?: number; maxParagraphs?: number }) => ({
      outboxSweepMs: 0,
      consumeProcessingResults: false,
      searchMemory,
    });

    const sizes = new SearchMemoryService(fx.ds, options({}), logger);
    const big = Math.max(bytes, (await sizes.build(other))!.bytes);
    const small = new SearchMemoryService(fx.ds, options({ budgetBytes: 1_000 }), logger);
    expect(await small.build(kbid)).toBeUndefined();
    expect(await small.current(kbid)).toBeUndefined();
    expect(small.stats().kbs).toEqual([]);
    const few = new SearchMemoryService(fx.ds, options({ maxParagraphs: 5 }), logger);
    expect(await few.build(kbid)).toBeUndefined();
    const off = new SearchMemoryService(fx.ds, options({ budgetBytes: 0 }), logger);
    expect(off.enabled).toBe(false);
    expect(await off.current(kbid)).toBeUndefined();

    // room for one KB at a time: building one evicts the other
    const lru = new SearchMemoryService(fx.ds, options({ budgetBytes: big + 1 }), logger);
    expect(await lru.build(kbid)).toBeDefined();
    expect(await lru.build(other)).toBeDefined();
    expect(lru.stats().kbs.map((k) => k.kbid)).toEqual([other]);
    expect(await lru.current(kbid)).toBeUndefined(); // starts a rebuild in the background
    expect(await lru.build(kbid)).toBeDefined();
    expect(lru.stats().kbs.map((k) => k.kbid)).toEqual([kbid]);
    expect(await lru.current(kbid)).toBeDefined();
  });
});
