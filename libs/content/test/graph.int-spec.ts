import { ContentSubjects, DomainError } from '@kb/contracts';
import { SearchRelations1764700000000 } from '../src/migrations/1764700000000-search-relations';
import { editDistance } from '../src/search/graph.service';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Node = { value: string; type: string; group: string };
type Path = { source: Node; relation: { label: string; type: string }; destination: Node };

describe('knowledge graph queries (/graph, /graph/nodes, /graph/relations)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000a8';
  let curie: string;
  let sorbonne: string;
  let secret: string;
  let hidden: string;
  let notes: string;

  beforeAll(async () => {
    fx = await startSearchFixture();
    curie = await fx.addResource(kbid, { title: 'Curie' }, 'Marie Curie worked in Paris on radium.', {
      ner: { 'Marie Curie': 'PERSON', Paris: 'PLACE', radium: 'OTHER' },
    });
    sorbonne = await fx.addResource(kbid, { title: 'Sorbonne' }, 'Marie Curie taught at the Sorbonne.', {
      ner: { 'Marie Curie': 'PERSON', Sorbonne: 'ORG' },
    });
    secret = await fx.addResource(kbid, { title: 'Private', security: { access_groups: ['lab'] } }, 'Marie Curie kept notes with Pierre.', {
      ner: { 'Marie Curie': 'PERSON', Pierre: 'PERSON' },
    });
    hidden = await fx.addResource(kbid, { title: 'Hidden', hidden: true }, 'Agent Smith met Marie Curie.', {
      ner: { 'Agent Smith': 'PERSON', 'Marie Curie': 'PERSON' },
    });
    notes = await fx.addResource(
      kbid,
      {
        title: 'Notes',
        usermetadata: {
          classifications: [{ labelset: 'topic', label: 'science' }],
          relations: [
            { relation: 'CHILD', to: { type: 'resource', value: curie } },
            {
              relation: 'OTHER',
              label: 'studied',
              from: { type: 'entity', value: 'Marie Curie', group: 'PERSON' },
              to: { type: 'entity', value: 'radioactivity', group: 'TOPIC' },
            },
            { relation: 'NOT-A-TYPE', to: { type: 'entity', value: 'ignored', group: 'X' } },
          ],
        },
      },
      'Reading notes.',
    );
  }, 90_000);

  afterAll(async () => {
    await fx?.close();
  });

  const paths = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.graphPaths, { kbid, body: body as never }) as Promise<{ paths: Path[] }>;
  const nodes = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.graphNodes, { kbid, body: body as never }) as Promise<{ nodes: Node[] }>;
  const relations = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.graphRelations, { kbid, body: body as never }) as Promise<{
      relations: { label: string; type: string }[];
    }>;
  const issues = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return ((err as DomainError).details?.['issues'] ?? (err as DomainError).details?.['detail'] ?? []) as {
      loc: (string | number)[];
      msg: string;
    }[];
  };

  it('answers the paths into a node, case-insensitively, through visible resources only', async () => {
    const into = (security?: Record<string, unknown>) =>
      paths({
        query: { prop: 'path', destination: { value: 'marie curie' }, relation: { type: 'ENTITY' } },
        ...(security ? { security } : {}),
      });
    // Callers presenting other groups see public resources only; without groups, every resource (as /find).
    const publicOnly = await into({ groups: ['other'] });
    expect(publicOnly.paths.map((p) => p.source.value).sort()).toEqual([curie, sorbonne].sort());
    expect((await into()).paths.map((p) => p.source.value).sort()).toEqual([curie, secret, sorbonne].sort());
    expect(publicOnly.paths[0]).toMatchObject({
      source: { type: 'resource', group: '' },
      relation: { label: 'PERSON', type: 'ENTITY' },
      destination: { value: 'Marie Curie', type: 'entity', group: 'PERSON' },
    });
    expect((await into({ groups: ['lab'] })).paths.map((p) => p.source.value).sort()).toEqual([curie, secret, sorbonne].sort());
    expect(
      (await paths({ query: { prop: 'path', destination: { value: 'Marie Curie' } }, show_hidden: true })).paths.map((p) => p.source.value),
    ).toContain(hidden);
    // The hidden resource's own entities stay out of every answer unless asked for.
    expect((await nodes({ query: { prop: 'node', value: 'Agent Smith' } })).nodes).toEqual([]);
    expect((await nodes({ query: { prop: 'node', value: 'Agent Smith' }, show_hidden: true })).nodes).toEqual([
      { value: 'Agent Smith', type: 'entity', group: 'PERSON' },
    ]);
  });

  it("indexes a resource's own edges: user relations (from the resource unless named) and ABOUT its labels", async () => {
    const own = await paths({ query: { prop: 'generated', by: 'user' } });
    expect(own.paths).toEqual(
      expect.arrayContaining([
        {
          source: { value: notes, type: 'resource', group: '' },
          relation: { label: '', type: 'CHILD' },
          destination: { value: curie, type: 'resource', group: '' },
        },
        {
          source: { value: notes, type: 'resource', group: '' },
          relation: { label: '', type: 'ABOUT' },
          destination: { value: 'topic/science', type: 'label', group: 'topic' },
        },
        {
          source: { value: 'Marie Curie', type: 'entity', group: 'PERSON' },
          relation: { label: 'studied', type: 'OTHER' },
          destination: { value: 'radioactivity', type: 'entity', group: 'TOPIC' },
        },
      ]),
    );
    expect(own.paths).toHaveLength(3);
    // An undirected path matches the edge either way round.
    const reversed = { prop: 'path', source: { value: 'radioactivity', group: 'TOPIC' }, destination: { value: 'Marie Curie' } };
    expect((await paths({ query: reversed })).paths).toEqual([]);
    expect((await paths({ query: { ...reversed, undirected: true } })).paths.map((p) => p.relation.label)).toEqual(['studied']);
  });

  it('combines expressions with and/or/not and source/destination/any node props', async () => {
    const places = await paths({
      query: {
        and: [
          { prop: 'source_node', type: 'resource' },
          { not: { prop: 'relation', label: 'PERSON' } },
          {
            or: [
              { prop: 'destination_node', group: 'PLACE' },
              { prop: 'destination_node', group: 'ORG' },
            ],
          },
        ],
      },
    });
    expect(places.paths.map((p) => `${p.destination.group}/${p.destination.value}`).sort()).toEqual(['ORG/Sorbonne', 'PLACE/Paris']);
    const either = await paths({ query: { prop: 'node', value: 'Marie Curie', type: 'entity' } });
    expect(
      either.paths.some((p) => p.source.value === 'Marie Curie') && either.paths.some((p) => p.destination.value === 'Marie Curie'),
    ).toBe(true);
    expect((await paths({ query: { prop: 'node', value: 'Marie Curie' }, top_k: 2 })).paths).toHaveLength(2);
  });

  it('finds nodes by exact or fuzzy value, by type and generator, and lists relation kinds', async () => {
    expect((await nodes({ query: { prop: 'node', value: 'Sorbone', match: 'fuzzy' } })).nodes).toEqual([
      { value: 'Sorbonne', type: 'entity', group: 'ORG' },
    ]);
    expect((await nodes({ query: { prop: 'node', value: 'Sorbone' } })).nodes).toEqual([]);
    expect((await nodes({ query: { prop: 'node', value: 'Mary Curie', match: 'fuzzy' } })).nodes).toEqual([
      { value: 'Marie Curie', type: 'entity', group: 'PERSON' },
    ]);
    const labels = await nodes({
      query: {
        and: [
          { prop: 'node', type: 'label' },
          { prop: 'generated', by: 'user' },
        ],
      },
    });
    expect(labels.nodes).toEqual([{ value: 'topic/science', type: 'label', group: 'topic' }]);
    expect((await nodes({ query: { prop: 'generated', by: 'data-augmentation' } })).nodes).toEqual([]);
    const kinds = await relations({ query: { prop: 'generated', by: 'processor' } });
    expect(kinds.relations).toEqual([
      { label: 'ORG', type: 'ENTITY' },
      { label: 'OTHER', type: 'ENTITY' },
      { label: 'PERSON', type: 'ENTITY' },
      { label: 'PLACE', type: 'ENTITY' },
    ]);
    expect((await relations({ query: { prop: 'relation', type: 'OTHER' } })).relations).toEqual([{ label: 'studied', type: 'OTHER' }]);
  });

  it('applies the field filter expression', async () => {
    const only = await paths({
      query: { prop: 'destination_node', value: 'Marie Curie' },
      filter_expression: { field: { prop: 'resource', id: sorbonne } },
    });
    expect(only.paths.map((p) => p.source.value)).toEqual([sorbonne]);
  });

  it("answers /find's graph feature with the paragraphs holding the matching edges, alone or fused", async () => {
    type Found = {
      best_matches: string[];
      resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { score_type: string }> }> }>;
    };
    const find = (body: Record<string, unknown>) => fx.bus.request(ContentSubjects.find, { kbid, body }) as unknown as Promise<Found>;
    const graph_query = { prop: 'path', destination: { value: 'Marie Curie' }, relation: { type: 'ENTITY' } };
    const alone = await find({ features: ['graph'], graph_query, security: { groups: ['other'] } });
    expect(alone.best_matches.map((id) => id.split('/')[0]).sort()).toEqual([curie, sorbonne].sort());
    expect(alone.best_matches.every((id) => id.includes('/t/body/'))).toBe(true);
    const scoreTypes = Object.values(alone.resources).flatMap((r) =>
      Object.values(r.fields).flatMap((f) => Object.values(f.paragraphs).map((p) => p.score_type)),
    );
    expect(new Set(scoreTypes)).toEqual(new Set(['RELATION_RELEVANCE']));
    // With keyword search, both lists are fused: the graph's paragraphs join the keyword hits.
    const fused = await find({ query: 'radium', features: ['keyword', 'graph'], graph_query, security: { groups: ['other'] } });
    expect(fused.best_matches[0]?.split('/')[0]).toBe(curie);
    expect(fused.best_matches.map((id) => id.split('/')[0])).toContain(sorbonne);
    const bad = (body: Record<string, unknown>) => issues(find(body));
    expect(await bad({ features: ['graph'] })).toEqual([expect.objectContaining({ loc: ['body', 'graph_query'] })]);
    expect(await bad({ features: ['keyword'], graph_query })).toEqual([expect.objectContaining({ loc: ['body', 'graph_query'] })]);
    expect(await bad({ features: ['graph', 'relations'], graph_query })).toEqual([expect.objectContaining({ loc: ['body', 'features'] })]);
    expect(await bad({ features: ['graph'], graph_query: { prop: 'node', value: 'ab', match: 'fuzzy' } })).toEqual([
      expect.objectContaining({ loc: ['body', 'graph_query'] }),
    ]);
  });

  it('carries existing content over when the migration runs: the same edges the indexer writes', async () => {
    const edges = async () =>
      (await fx.ds.query(
        `SELECT rid::text, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated
         FROM content.search_relations WHERE kbid = $1 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12`,
        [kbid],
      )) as Record<string, unknown>[];
    const before = await edges();
    expect(before.length).toBeGreaterThan(10);
    const runner = fx.ds.createQueryRunner();
    try {
      const migration = new SearchRelations1764700000000();
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect(await edges()).toEqual(before);
  });

  it('follows writes: changed user relations, deleted resources', async () => {
    await fx.bus.request(ContentSubjects.modifyResource, {
      kbid,
      rid: notes,
      body: {
        usermetadata: {
          classifications: [],
          relations: [
            {
              relation: 'SYNONYM',
              from: { type: 'entity', value: 'radium', group: 'OTHER' },
              to: { type: 'entity', value: 'Ra', group: 'OTHER' },
            },
          ],
        },
      },
    });
    const own = await paths({ query: { prop: 'generated', by: 'user' } });
    expect(own.paths).toEqual([
      {
        source: { value: 'radium', type: 'entity', group: 'OTHER' },
        relation: { label: '', type: 'SYNONYM' },
        destination: { value: 'Ra', type: 'entity', group: 'OTHER' },
      },
    ]);
    await fx.bus.request(ContentSubjects.deleteResource, { kbid, rid: sorbonne });
    expect((await nodes({ query: { prop: 'node', value: 'Sorbonne' } })).nodes).toEqual([]);
  });

  it('refuses malformed queries with every problem located', async () => {
    expect(await issues(paths({}))).toEqual([expect.objectContaining({ loc: ['body', 'query'], msg: 'Field required' })]);
    expect((await issues(paths({ query: { prop: 'nope' } })))[0]?.loc).toEqual(['body', 'query']);
    expect(await issues(nodes({ query: { prop: 'path' } }))).toEqual([expect.objectContaining({ loc: ['body', 'query'] })]);
    expect(await issues(paths({ query: { prop: 'node', value: 'ab', match: 'fuzzy' } }))).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('at least 3 characters') }),
    ]);
    expect(await issues(paths({ query: { prop: 'generated', by: 'user', da_task: 'x' } }))).toEqual([
      expect.objectContaining({ loc: ['body', 'query', 'da_task'] }),
    ]);
    const many = await issues(
      paths({
        query: {
          and: [
            { prop: 'relation', type: 'LIKES' },
            { prop: 'node', type: 'person', colour: 'red' },
          ],
        },
        top_k: 0,
        filter_expression: { paragraph: {} },
      }),
    );
    expect(many.map((i) => i.loc.join('.')).sort()).toEqual([
      'body.filter_expression.paragraph',
      'body.query.and.0.type',
      'body.query.and.1.colour',
      'body.query.and.1.type',
      'body.top_k',
    ]);
    expect(await issues(paths({ query: { or: [] } }))).toEqual([expect.objectContaining({ loc: ['body', 'query', 'or'] })]);
    expect(await issues(paths({ query: { prop: 'node' }, extra: 1 }))).toEqual([expect.objectContaining({ loc: ['body', 'extra'] })]);
  });

  it('measures edit distance with an early stop', () => {
    expect(editDistance('sorbone', 'sorbonne', 2)).toBe(1);
    expect(editDistance('kitten', 'sitting', 2)).toBe(3);
    expect(editDistance('abc', 'abc', 0)).toBe(0);
  });
});
