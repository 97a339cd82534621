import { ContentSubjects } from '@kb/contracts';
import { GRAPH_EXPLORATION } from '../src/ask/graph/graph-explore';
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
});
