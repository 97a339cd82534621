import type { EntityManager } from 'typeorm';
import { ContentSubjects } from '@kb/contracts';
import { GraphBudgetSpent, withinBudget } from '../src/ask/graph/graph-budget';
import { detectEntities, GRAPH_EXPLORATION } from '../src/ask/graph/graph-explore';
import { GraphStrategyService } from '../src/ask/graph/graph-strategy.service';
import { SqlParams } from '../src/search/query/sql';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type GraphResults = {
  best_matches: string[];
  relations: { entities: Record<string, { related_to: { entity: string; metadata: { hop: number } }[] }> };
  metrics: Record<string, number> | null;
};

/**
 * graph_beta on a graph built to be expensive: one entity with 20 000 neighbours, each with a
 * neighbour of its own. One /ask reads at most GRAPH_EXPLORATION.maxEdgesPerHop edges a hop (the
 * oldest first), keeps top_k, and answers in bounded time.
 */
describe('graph_beta bounds', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000ab';
  const fanOut = 20_000;

  beforeAll(async () => {
    fx = await startSearchFixture();
    const rid = await fx.addResource(kbid, { title: 'Hub' }, 'The hub links everything.');
    // Straight into the graph index: far more relations than a resource's metadata may carry.
    await fx.ds.query(
      `INSERT INTO content.search_relations
         (kbid, rid, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated)
       SELECT $1::uuid, $2::uuid, '', 'Hub', 'entity', 'THING', 'OTHER', 'links', 'Node' || i, 'entity', 'THING', NULL, 'user' FROM generate_series(1, $3::int) AS i
       UNION ALL
       SELECT $1::uuid, $2::uuid, '', 'Node' || i, 'entity', 'THING', 'OTHER', 'feeds', 'Leaf' || i, 'entity', 'THING', NULL, 'user' FROM generate_series(1, $3::int) AS i`,
      [kbid, rid, fanOut],
    );
  }, 180_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('reads at most maxEdgesPerHop edges a hop and keeps top_k, in bounded time', async () => {
    const started = Date.now();
    let graph: GraphResults | undefined;
    for await (const item of fx.bus.requestStream(ContentSubjects.ask, {
      kbid,
      body: {
        query: 'What does the Hub link?',
        debug: true,
        rag_strategies: [{ name: 'graph_beta', hops: 10, top_k: 300, relation_text_as_paragraphs: true }],
      },
    })) {
      if (item.type === 'prequeries') graph = (item['results'] as unknown as Record<string, GraphResults>)['graph'];
    }
    const elapsed = Date.now() - started;
    expect(graph?.best_matches).toHaveLength(300);
    const related = Object.values(graph?.relations.entities ?? {}).flatMap((e) => e.related_to);
    // Only the first maxEdgesPerHop of the hub's edges were read (the oldest first): no NodeN beyond.
    const nodes = related.map((r) => r.entity).filter((e) => e.startsWith('Node'));
    expect(nodes.length).toBeGreaterThan(0);
    expect(Math.max(...nodes.map((n) => Number(n.slice(4))))).toBeLessThanOrEqual(GRAPH_EXPLORATION.maxEdgesPerHop);
    expect(Math.max(...related.map((r) => r.metadata.hop))).toBeLessThanOrEqual(1);
    console.log(
      `graph_beta over ${2 * fanOut} edges, hops 10, top_k 300: ${elapsed} ms, exploration ${graph?.metrics?.['graph_exploration']} s`,
    );
    expect(elapsed).toBeLessThan(30_000);
  }, 120_000);

  /** Rows the scans of content.search_relations in an EXPLAIN ANALYZE plan read (kept and filtered out). */
  const relationRows = (plan: Record<string, unknown>): number => {
    const own =
      plan['Relation Name'] === 'search_relations'
        ? ((plan['Actual Rows'] as number) +
            ((plan['Rows Removed by Filter'] as number) ?? 0) +
            ((plan['Rows Removed by Index Recheck'] as number) ?? 0)) *
          ((plan['Actual Loops'] as number) ?? 1)
        : 0;
    return own + ((plan['Plans'] as Record<string, unknown>[] | undefined) ?? []).reduce((n, p) => n + relationRows(p), 0);
  };

  it('suggest finds entities by name prefix and by whole word through the indexes, reading a bounded number of edges', async () => {
    const scope = { kbid, where: 'p.kbid = $1', params: new SqlParams([kbid]) };
    const kinds = { excludeProcessor: true, withParagraph: false };
    expect(await detectEntities(fx.ds.manager, scope, kinds, 'Which leaf9999 does the hub feed?', 'suggest')).toEqual(
      expect.arrayContaining(['hub', 'leaf9999']),
    );
    // Every query the detection runs, explained with what it actually read.
    let read = 0;
    const explaining = {
      query: async (sql: string, params: unknown[]) => {
        const [row] = (await fx.ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)) as {
          'QUERY PLAN': { Plan: Record<string, unknown> }[];
        }[];
        read += relationRows(row?.['QUERY PLAN'][0]?.Plan ?? {});
        return fx.ds.query(sql, params);
      },
    } as unknown as EntityManager;
    const found = await detectEntities(explaining, scope, kinds, 'What does the Hub link?', 'suggest');
    expect(found).toContain('hub');
    // 40 000 edges in the KB; the words of the question (what, does, the, hub, link) each read at most
    // maxSuggestEdgesPerWord edges by prefix and by word, on each end: a scan of the graph reads them all.
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThanOrEqual(5 * 4 * GRAPH_EXPLORATION.maxSuggestEdgesPerWord);
  }, 60_000);

  it("a step's queries stop at the exploration's remaining time, and an /ask whose budget is spent still answers", async () => {
    // Runs 800 ms of the clock whatever the machine's speed (a fixed amount of work finished within
    // 100 ms on a fast day): longer than 100 ms plus the 250 ms grace, short enough for an embedded
    // database that does not cancel it to finish soon after.
    const slow = (m: EntityManager) =>
      m.query(
        `WITH RECURSIVE t(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM t WHERE clock_timestamp() < statement_timestamp() + interval '800 milliseconds') SELECT count(*) AS n FROM t`,
      );
    await expect(withinBudget(fx.ds, 100, slow)).rejects.toBeInstanceOf(GraphBudgetSpent);
    await expect(withinBudget(fx.ds, 0, slow)).rejects.toBeInstanceOf(GraphBudgetSpent);
    // Within its time a step runs as usual.
    await expect(withinBudget(fx.ds, 60_000, (m) => m.query(`SELECT 1 AS one`))).resolves.toEqual([{ one: 1 }]);
    const graphs = fx.get(GraphStrategyService);
    graphs.budgetMs = 1;
    try {
      const types: string[] = [];
      let graph: GraphResults | undefined;
      for await (const item of fx.bus.requestStream(ContentSubjects.ask, {
        kbid,
        body: {
          query: 'What does the Hub link?',
          debug: true,
          rag_strategies: [{ name: 'graph_beta', hops: 3, relation_text_as_paragraphs: true }],
        },
      })) {
        types.push(item.type);
        if (item.type === 'prequeries') graph = (item['results'] as unknown as Record<string, GraphResults>)['graph'];
      }
      expect(types).toContain('answer');
      expect(graph?.metrics?.['graph_hops']).toBe(0);
    } finally {
      graphs.budgetMs = GRAPH_EXPLORATION.budgetMs;
    }
  }, 120_000);
});
