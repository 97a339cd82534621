import { ContentSubjects } from '@kb/contracts';
import { SearchMemoryService } from '../src/search/memory/search-memory.service';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

/** A small deterministic PRNG, so a failure reproduces. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const GROUPS = ['sales', 'legal', 'hr', 'eng', 'sales/emea'];
const WORDS = ['apollo', 'budget', 'contract', 'delta', 'merger', 'orbit', 'payroll', 'quarter', 'rocket', 'salary', 'tariff', 'vendor'];

/**
 * Generated leak test: many resources with overlapping groups and labels; every endpoint and
 * every facet is asked by callers with every combination of groups, and nothing outside the
 * caller's groups may show up — not as a hit, a resource, a suggestion, nor in a facet count.
 */
describe('security groups: generated leak test', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000ee';
  const resources: { rid: string; groups: string[]; label: string; words: string[] }[] = [];

  beforeAll(async () => {
    fx = await startSearchFixture();
    const rnd = prng(42);
    for (let i = 0; i < 36; i++) {
      const groups = GROUPS.filter(() => rnd() < 0.3);
      const words = WORDS.filter(() => rnd() < 0.4);
      if (words.length === 0) words.push(WORDS[i % WORDS.length] as string);
      const label = `l${i % 4}`;
      const text = `Document ${i} about ${words.join(' and ')}, for Acme and Entity${i}.\n\nMore on ${words.slice().reverse().join(', ')}.`;
      const rid = await fx.addResource(
        kbid,
        {
          title: `Report ${words[0]} ${i}`,
          security: { access_groups: groups },
          usermetadata: {
            classifications: [{ labelset: 'topic', label }],
            // A user relation per resource: Acme → Partner{i} (graph_beta explores it).
            relations: [
              {
                relation: 'OTHER',
                label: 'partners with',
                from: { value: 'Acme', type: 'entity', group: 'PARTNER' },
                to: { value: `Partner${i}`, type: 'entity', group: 'PARTNER' },
              },
            ],
          },
        },
        text,
        { ner: { [`Entity${i}`]: 'ORG', Acme: 'ORG' } },
      );
      resources.push({ rid, groups, label, words });
    }
    // /find answers from the KB's index in memory (decision 0014): that path is the one checked here.
    expect(await fx.get(SearchMemoryService).build(kbid)).toBeDefined();
  }, 180_000);

  it('checks /find on the index in memory', async () => {
    const r = (await fx.bus.request(ContentSubjects.find, {
      kbid,
      body: { query: 'budget', debug: true, security: { groups: ['sales'] } },
    })) as { metrics: Record<string, number> };
    expect(r.metrics['memory_index']).toBe(1);
  });

  afterAll(async () => {
    await fx?.close();
  });

  const callers: (string[] | undefined)[] = [undefined, [], ['sales'], ['legal', 'hr'], ['eng'], ['nobody'], ['sales/emea']];
  const visible = (groups: string[] | undefined, r: { groups: string[] }) =>
    !groups || groups.length === 0 || r.groups.length === 0 || r.groups.some((g) => groups.includes(g));

  it('never returns or counts a resource outside the caller groups, on any endpoint or facet', async () => {
    const leaks: string[] = [];
    let retrievedMatches = 0;
    let hydratedParagraphs = 0;
    let augmented = 0;
    // Every paragraph id of the KB (an unrestricted caller's hits for every word).
    const allParagraphs = [
      ...new Set(
        (
          await Promise.all(
            WORDS.map(
              async (word) =>
                (
                  (await fx.bus.request(ContentSubjects.find, { kbid, body: { query: word, top_k: 200, features: ['keyword'] } })) as {
                    best_matches: string[];
                  }
                ).best_matches,
            ),
          )
        ).flat(),
      ),
    ];
    for (const groups of callers) {
      const security = groups ? { security: { groups } } : {};
      const allowed = new Set(resources.filter((r) => visible(groups, r)).map((r) => r.rid));
      const check = (where: string, rids: string[]) => {
        for (const rid of rids) if (!allowed.has(rid)) leaks.push(`${where} with groups ${JSON.stringify(groups)} returned ${rid}`);
      };
      for (const word of WORDS) {
        const find = (await fx.bus.request(ContentSubjects.find, { kbid, body: { query: word, top_k: 200, ...security } })) as {
          resources: Record<string, unknown>;
          best_matches: string[];
        };
        check('find', [...Object.keys(find.resources), ...find.best_matches.map((id) => id.split('/')[0] as string)]);
        // /retrieve: the same plan from its own shape (text and raw queries, groups under filters.security).
        for (const query of [{ query: word }, { keyword: { query: word } }]) {
          const retrieved = (await fx.bus.request(ContentSubjects.retrieve, {
            kbid,
            body: { query, top_k: 200, reranker: 'predict', filters: groups ? { security: { groups } } : {} },
          })) as { matches: { id: string }[] };
          check(
            'retrieve',
            retrieved.matches.map((m) => m.id.split('/')[0] as string),
          );
          retrievedMatches += retrieved.matches.length;
        }
        const search = (await fx.bus.request(ContentSubjects.search, {
          kbid,
          body: { query: word, top_k: 200, faceted: ['/l/topic', '/e/ORG'], ...security },
        })) as unknown as Record<string, { results?: { rid: string }[]; facets?: Record<string, Record<string, number>> }>;
        for (const list of ['paragraphs', 'fulltext', 'sentences'])
          check(
            `search.${list}`,
            (search[list]?.results ?? []).map((x) => x.rid),
          );
        check('search.resources', Object.keys(search['resources'] ?? {}));
        // Facet counts must equal what the caller may see.
        const expected = resources.filter((r) => allowed.has(r.rid) && r.words.includes(word));
        for (let l = 0; l < 4; l++) {
          const got = search['paragraphs']?.facets?.['/l/topic']?.[`/l/topic/l${l}`] ?? 0;
          const want = expected.filter((r) => r.label === `l${l}`).length;
          if (got !== want) leaks.push(`search facet /l/topic/l${l} for ${word} with ${JSON.stringify(groups)}: ${got} != ${want}`);
        }
        const suggest = (await fx.bus.request(ContentSubjects.suggest, { kbid, body: { query: word.slice(0, 3), ...security } })) as {
          paragraphs?: { results: { rid: string }[] };
          entities?: { entities: { value: string }[] };
        };
        check(
          'suggest',
          (suggest.paragraphs?.results ?? []).map((x) => x.rid),
        );
        for (const e of suggest.entities?.entities ?? []) {
          const i = Number(e.value.replace('Entity', ''));
          const owner = resources[i];
          if (owner && !allowed.has(owner.rid)) leaks.push(`suggest entity ${e.value} with ${JSON.stringify(groups)}`);
        }
      }
      // Relations: the resources mentioning an entity every resource names, and the entities beside it.
      const relations = (await fx.bus.request(ContentSubjects.find, {
        kbid,
        body: { query: 'news about acme', features: ['relations'], ...security },
      })) as {
        relations: { entities: Record<string, { related_to: { entity: string; entity_type: string; resource_id: string | null }[] }> };
      };
      const related = relations.relations.entities['Acme']?.related_to ?? [];
      const shown = related.filter((r) => r.entity_type === 'resource').map((r) => r.resource_id as string);
      check('relations', shown);
      if (new Set(shown).size !== allowed.size)
        leaks.push(`relations listed ${new Set(shown).size} resources, ${allowed.size} visible, with ${JSON.stringify(groups)}`);
      for (const r of related.filter((x) => x.entity_type === 'entity')) {
        const owner = resources[Number(r.entity.replace('Entity', ''))];
        if (!owner || !allowed.has(owner.rid)) leaks.push(`relations entity ${r.entity} with ${JSON.stringify(groups)}`);
      }
      // The knowledge graph: edges into Acme name their resources; every EntityN node belongs to one resource.
      const graph = (await fx.bus.request(ContentSubjects.graphPaths, {
        kbid,
        body: { query: { prop: 'destination_node', value: 'Acme' }, top_k: 500, ...security },
      })) as { paths: { source: { value: string } }[] };
      check(
        'graph',
        graph.paths.map((p) => p.source.value),
      );
      if (graph.paths.length !== allowed.size)
        leaks.push(`graph listed ${graph.paths.length} edges into Acme, ${allowed.size} visible, with ${JSON.stringify(groups)}`);
      const graphFind = (await fx.bus.request(ContentSubjects.find, {
        kbid,
        body: { features: ['graph'], graph_query: { prop: 'destination_node', value: 'Acme' }, top_k: 200, ...security },
      })) as { resources: Record<string, unknown>; best_matches: string[] };
      check('find graph', [...Object.keys(graphFind.resources), ...graphFind.best_matches.map((id) => id.split('/')[0] as string)]);
      if (Object.keys(graphFind.resources).length !== allowed.size)
        leaks.push(
          `find graph listed ${Object.keys(graphFind.resources).length} resources, ${allowed.size} visible, with ${JSON.stringify(groups)}`,
        );
      const graphNodes = (await fx.bus.request(ContentSubjects.graphNodes, {
        kbid,
        body: { query: { prop: 'node', group: 'ORG' }, top_k: 500, ...security },
      })) as { nodes: { value: string }[] };
      for (const n of graphNodes.nodes.filter((x) => x.value.startsWith('Entity'))) {
        const owner = resources[Number(n.value.replace('Entity', ''))];
        if (!owner || !allowed.has(owner.rid)) leaks.push(`graph node ${n.value} with ${JSON.stringify(groups)}`);
      }
      if (graphNodes.nodes.length !== allowed.size + (allowed.size ? 1 : 0))
        leaks.push(`graph listed ${graphNodes.nodes.length} ORG nodes with ${JSON.stringify(groups)}`);
      const catalog = (await fx.bus.request(ContentSubjects.catalog, {
        kbid,
        body: { page_size: 200, faceted: ['/l/topic'], ...security },
      })) as unknown as {
        resources: Record<string, unknown>;
        fulltext: { results: { rid: string }[]; total: number; facets: Record<string, Record<string, number>> };
      };
      check('catalog', [...Object.keys(catalog.resources), ...catalog.fulltext.results.map((x) => x.rid)]);
      if (catalog.fulltext.total !== allowed.size)
        leaks.push(`catalog total ${catalog.fulltext.total} != ${allowed.size} with ${JSON.stringify(groups)}`);
      for (let l = 0; l < 4; l++) {
        const got = catalog.fulltext.facets['/l/topic']?.[`/l/topic/l${l}`] ?? 0;
        const want = resources.filter((r) => allowed.has(r.rid) && r.label === `l${l}`).length;
        if (got !== want) leaks.push(`catalog facet /l/topic/l${l} with ${JSON.stringify(groups)}: ${got} != ${want}`);
      }
      const asked: string[] = [];
      for await (const item of fx.bus.requestStream(ContentSubjects.ask, {
        kbid,
        body: { query: 'merger contract salary', ...security },
        ...(groups?.length ? { forced_groups: groups } : {}),
      })) {
        if (item.type === 'retrieval') asked.push(...(item['best_matches'] as { id: string }[]).map((b) => b.id.split('/')[0] as string));
        if (item.type === 'citations') asked.push(...Object.keys(item['citations'] as object).map((k) => k.split('/')[0] as string));
        if (item.type === 'augmented_context')
          asked.push(...Object.keys((item['augmented'] as { paragraphs: object }).paragraphs).map((k) => k.split('/')[0] as string));
      }
      check('ask', asked);
      // graph_beta: relation texts (users' and processing's relations) and the paragraphs of processing's relations.
      for (const relationText of [true, false]) {
        const graphAsked: string[] = [];
        const partners = new Set<string>();
        for await (const item of fx.bus.requestStream(ContentSubjects.ask, {
          kbid,
          body: {
            query: 'Who partners with Acme?',
            rag_strategies: [
              { name: 'graph_beta', hops: 2, top_k: 300, exclude_processor_relations: false, relation_text_as_paragraphs: relationText },
            ],
            ...security,
          },
          ...(groups?.length ? { forced_groups: groups } : {}),
        })) {
          if (item.type === 'retrieval')
            graphAsked.push(...(item['best_matches'] as { id: string }[]).map((b) => b.id.split('/')[0] as string));
          if (item.type === 'citations') graphAsked.push(...Object.keys(item['citations'] as object).map((k) => k.split('/')[0] as string));
          if (item.type === 'prequeries') {
            const graphResults = (
              item['results'] as Record<
                string,
                {
                  resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { text: string }> }> }>;
                  best_matches: string[];
                  relations: { entities: Record<string, { related_to: { resource_id: string | null }[] }> };
                }
              >
            )['graph'];
            if (!graphResults) leaks.push('ask graph_beta: no graph results');
            else {
              graphAsked.push(...Object.keys(graphResults.resources), ...graphResults.best_matches.map((id) => id.split('/')[0] as string));
              for (const e of Object.values(graphResults.relations.entities))
                graphAsked.push(...e.related_to.map((r) => r.resource_id as string));
              for (const res of Object.values(graphResults.resources))
                for (const f of Object.values(res.fields))
                  for (const para of Object.values(f.paragraphs))
                    for (const m of para.text.matchAll(/Partner(\d+)|Entity(\d+)/g)) partners.add(m[0]);
            }
          }
        }
        check(`ask graph_beta (relation texts: ${relationText})`, graphAsked);
        for (const name of partners) {
          const owner = resources[Number(name.replace(/\D+/, ''))];
          if (!owner || !allowed.has(owner.rid)) leaks.push(`ask graph_beta named ${name} with ${JSON.stringify(groups)}`);
        }
        // Not vacuous: every visible resource's user relation is found (relation texts), or a paragraph of each (paragraphs).
        const reached = new Set(graphAsked);
        if (relationText && [...partners].filter((x) => x.startsWith('Partner')).length !== allowed.size)
          leaks.push(`ask graph_beta named ${partners.size} partners, ${allowed.size} visible, with ${JSON.stringify(groups)}`);
        if (!relationText && [...allowed].some((rid) => !reached.has(rid)))
          leaks.push(`ask graph_beta paragraphs missed a visible resource with ${JSON.stringify(groups)}`);
      }
      // /hydrate: every paragraph id of the KB asked by each caller (50 at a time, with neighbours).
      for (let i = 0; i < allParagraphs.length; i += 50) {
        const hydrated = (await fx.bus.request(ContentSubjects.hydrate, {
          kbid,
          body: {
            data: allParagraphs.slice(i, i + 50),
            hydration: { resource: { summary: true }, paragraph: { related: { neighbours: { before: 3, after: 3 } } } },
            ...security,
          },
        })) as { resources: Record<string, unknown>; paragraphs: Record<string, { resource: string }> };
        check('hydrate', [...Object.keys(hydrated.resources), ...Object.values(hydrated.paragraphs).map((p) => p.resource)]);
        if (!groups || groups.length === 0) hydratedParagraphs += Object.keys(hydrated.paragraphs).length;
      }
      // /augment: every paragraph id of the KB (30 at a time, with neighbours), with their fields and resources.
      for (let i = 0; i < allParagraphs.length; i += 30) {
        const ids = allParagraphs.slice(i, i + 30);
        const fieldIds = [...new Set(ids.map((id) => id.split('/').slice(0, 3).join('/')))];
        const rids = [...new Set(ids.map((id) => id.split('/')[0] as string))];
        const got = (await fx.bus.request(ContentSubjects.augment, {
          kbid,
          body: {
            resources: [{ given: rids, title: true, summary: true, basic: true, classification_labels: true }],
            fields: [{ given: fieldIds, text: true }],
            paragraphs: [{ given: ids.map((id) => ({ id })), neighbours_before: 3, neighbours_after: 3 }],
            ...security,
          },
        })) as { resources: Record<string, unknown>; fields: Record<string, unknown>; paragraphs: Record<string, unknown> };
        const keys = [...Object.keys(got.resources), ...Object.keys(got.fields), ...Object.keys(got.paragraphs)];
        check(
          'augment',
          keys.map((k) => k.split('/')[0] as string),
        );
        if (!groups || groups.length === 0) augmented += keys.length;
      }
    }
    expect(leaks).toEqual([]);
    // (the /retrieve checks saw matches: they are not vacuous)
    expect(retrievedMatches).toBeGreaterThan(0);
    expect(hydratedParagraphs).toBeGreaterThanOrEqual(2 * allParagraphs.length);
    expect(augmented).toBeGreaterThanOrEqual(2 * allParagraphs.length);
  }, 240_000);
});
