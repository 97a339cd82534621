import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { bearer, type Credential } from './support/http-client';
import { kbAnsweringWith, resourceProcessed } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Paragraphs = Record<string, { score_type: string; text: string }>;
type FindResults = {
  resources: Record<string, { fields: Record<string, { paragraphs: Paragraphs }> }>;
  best_matches: string[];
  relations: { entities: Record<string, { related_to: { entity: string; resource_id: string | null }[] }> };
};
type Item = {
  type: string;
  text?: string;
  status?: string;
  results?: Record<string, FindResults>;
  citations?: Record<string, unknown>;
  best_matches?: { id: string }[];
  metadata?: { prompt_context: string[] };
};
type Detail = { detail: { loc: (string | number)[]; type: string }[] };

/** The texts of a /find result's paragraphs. */
const texts = (r: FindResults | undefined): string[] =>
  Object.values(r?.resources ?? {}).flatMap((res) =>
    Object.values(res.fields).flatMap((f) => Object.values(f.paragraphs).map((p) => p.text)),
  );

/**
 * The graph_beta RAG strategy of /ask over HTTP on the standalone service: a KB whose resources carry
 * user relations (Barack Obama → Angela Merkel → Germany → France, and one only the `legal` group may
 * see) and processing's entity relations; the relations found reach the context (the built-in
 * extractive model's and a provider's), hop by hop, ranked and cut to top_k, never from a resource
 * the caller may not see.
 */
describe('ask graph_beta through the gateway (standalone)', () => {
  let topology: Topology;
  let llm: FakeLlmServer;
  let pat: Credential;
  let offlineKb: string;
  let openaiKb: string;
  const rids: Record<string, string[]> = {};
  const person = (value: string) => ({ type: 'entity', value, group: 'PERSON' });
  const place = (value: string) => ({ type: 'entity', value, group: 'PLACE' });
  const resources = [
    {
      title: 'Presidents',
      texts: { body: { body: 'Barack Obama met Angela Merkel in Berlin.\n\nHe gave a speech at the Brandenburg Gate.' } },
      usermetadata: {
        relations: [
          { relation: 'OTHER', label: 'met', from: person('Barack Obama'), to: person('Angela Merkel') },
          { relation: 'OTHER', label: 'leads', from: person('Angela Merkel'), to: place('Germany') },
        ],
      },
    },
    {
      title: 'Maps',
      texts: { body: { body: 'Old maps show rivers and mountains.' } },
      usermetadata: { relations: [{ relation: 'OTHER', label: 'borders', from: place('Germany'), to: place('France') }] },
    },
    {
      title: 'Classified',
      texts: { body: { body: 'Notes for the legal team only.' } },
      security: { access_groups: ['legal'] },
      usermetadata: { relations: [{ relation: 'OTHER', label: 'visited', from: person('Barack Obama'), to: place('Atlantis') }] },
    },
  ];

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    topology = await startStandalone();
    pat = bearer(topology.bootstrap().personal_access_token.token);
    offlineKb = await kbAnsweringWith(topology, pat, 'graph-offline', 'offline');
    openaiKb = await kbAnsweringWith(topology, pat, 'graph-openai', 'openai', llm);
    for (const kb of [offlineKb, openaiKb]) {
      for (const body of resources) {
        const created = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, { credential: pat, body });
        expect(created.status).toBe(201);
        (rids[kb] ??= []).push(created.body.uuid);
      }
      for (const rid of rids[kb] as string[]) await resourceProcessed(topology.http, pat, kb, rid);
    }
    // The provider KB's fields get question/answer pairs from the fake provider: those calls end before the tests script its answers.
    await topology.http.eventually(
      async () => (llm.requests.filter((r) => JSON.stringify(r.body).includes('question and answer pairs')).length >= 3 ? true : undefined),
      30_000,
      'question/answer calls',
    );
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
  }, 60_000);
  beforeEach(() => llm.reset());

  const ask = async (kb: string, body: Record<string, unknown>): Promise<Item[]> => {
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/ask`, {
      method: 'POST',
      headers: { [pat!.header]: pat!.value, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { item: Item }).item);
  };
  const graphOf = (items: Item[]) => items.find((i) => i.type === 'prequeries')?.results?.['graph'];
  const contextOf = (items: Item[]) => items.find((i) => i.type === 'debug')?.metadata?.prompt_context ?? [];
  const graphAsk = (kb: string, strategy: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    ask(kb, {
      query: 'Who did Barack Obama meet?',
      debug: true,
      rag_strategies: [{ name: 'graph_beta', relation_text_as_paragraphs: true, ...strategy }],
      security: { groups: ['sales'] },
      ...extra,
    });

  it('explores hop by hop from the entities of the question: 1, 2 and 3 hops reach one more relation each', async () => {
    const reached = async (hops: number) => texts(graphOf(await graphAsk(offlineKb, { hops }))).sort();
    expect(await reached(1)).toEqual(['Barack Obama — met → Angela Merkel']);
    expect(await reached(2)).toEqual(['Angela Merkel — leads → Germany', 'Barack Obama — met → Angela Merkel']);
    expect(await reached(3)).toEqual([
      'Angela Merkel — leads → Germany',
      'Barack Obama — met → Angela Merkel',
      'Germany — borders → France',
    ]);
  });

  it('puts the relations into the context, the retrieval and the citations under ids naming their resource', async () => {
    const items = await ask(offlineKb, {
      query: 'Which country does Angela Merkel lead?',
      features: ['keyword'],
      debug: true,
      rag_strategies: [{ name: 'graph_beta', hops: 1, relation_text_as_paragraphs: true }],
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    expect(contextOf(items)).toEqual(expect.arrayContaining(['Angela Merkel — leads → Germany', 'Barack Obama — met → Angela Merkel']));
    // The built-in extractive model answers from the relation.
    const answer = items
      .filter((i) => i.type === 'answer')
      .map((i) => i.text)
      .join('');
    expect(answer).toContain('Germany');
    const presidents = (rids[offlineKb] as string[])[0] as string;
    const graph = graphOf(items);
    expect(graph?.best_matches.every((id) => id.startsWith(`${presidents}/a/usermetadata/`))).toBe(true);
    const retrieval = items.find((i) => i.type === 'retrieval');
    expect(retrieval?.best_matches?.map((b) => b.id)).toEqual(expect.arrayContaining(graph?.best_matches ?? ['none']));
    const cited = Object.keys(items.find((i) => i.type === 'citations')?.citations ?? {});
    expect(cited.some((id) => id.startsWith(`${presidents}/a/usermetadata/`))).toBe(true);
    expect(Object.keys(graph?.relations.entities ?? {})).toEqual(expect.arrayContaining(['Angela Merkel', 'Barack Obama']));
  });

  it('keeps top_k relations, the most relevant first', async () => {
    const one = texts(graphOf(await graphAsk(offlineKb, { hops: 3, top_k: 1 })));
    expect(one).toEqual(['Barack Obama — met → Angela Merkel']);
  });

  it("never uses a relation of a resource outside the caller's groups", async () => {
    const outsider = await graphAsk(offlineKb, { hops: 1 });
    expect(JSON.stringify(outsider)).not.toContain('Atlantis');
    const legal = await graphAsk(offlineKb, { hops: 1 }, { security: { groups: ['legal'] } });
    expect(texts(graphOf(legal))).toContain('Barack Obama — visited → Atlantis');
    // Filters too: only the relations of the resources the filter lets through.
    const maps = (rids[offlineKb] as string[])[1] as string;
    const filtered = await graphAsk(offlineKb, { hops: 3 }, { filter_expression: { field: { prop: 'resource', id: maps } } });
    expect(texts(graphOf(filtered))).toEqual([]);
    const fromGermany = await graphAsk(
      offlineKb,
      { hops: 3 },
      { query: 'What does Germany border?', filter_expression: { field: { prop: 'resource', id: maps } } },
    );
    expect(texts(graphOf(fromGermany))).toEqual(['Germany — borders → France']);
  });

  it('detects entities by name (predict) or by word prefix (suggest)', async () => {
    const query = 'Who did Obama meet?';
    expect(texts(graphOf(await graphAsk(offlineKb, { hops: 1 }, { query })))).toEqual([]);
    expect(texts(graphOf(await graphAsk(offlineKb, { hops: 1, query_entity_detection: 'suggest' }, { query })))).toEqual([
      'Barack Obama — met → Angela Merkel',
    ]);
  });

  it('gives the paragraphs processing found the entities in, with exclude_processor_relations false', async () => {
    const strategy = { hops: 1, relation_text_as_paragraphs: false, exclude_processor_relations: false };
    const graph = graphOf(await graphAsk(offlineKb, strategy));
    expect(texts(graph)).toEqual(['Barack Obama met Angela Merkel in Berlin.']);
    const paragraph = Object.values(Object.values(graph?.resources ?? {})[0]?.fields ?? {})[0]?.paragraphs ?? {};
    expect(Object.values(paragraph)[0]?.score_type).toBe('RELATION_RELEVANCE');
    // By default only the users' relations count, and those hold no paragraph.
    expect(texts(graphOf(await graphAsk(offlineKb, { hops: 1, relation_text_as_paragraphs: false })))).toEqual([]);
  });

  it("sends the relations to the KB's provider, and ranks them with it when asked", async () => {
    llm.enqueue({ chunks: ['Angela Merkel.'] });
    await graphAsk(openaiKb, { hops: 1 });
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain('Barack Obama — met → Angela Merkel');
    llm.reset();
    llm.enqueue({ chunks: ['{"scores": [9]}'] }, { chunks: ['Angela Merkel.'] });
    const ranked = await graphAsk(openaiKb, { hops: 1, relation_ranking: 'generative' });
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('relation_scores');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Angela Merkel');
    expect(texts(graphOf(ranked))).toEqual(['Barack Obama — met → Angela Merkel']);
    // A relation the model scores 2 or less is dropped.
    llm.reset();
    llm.enqueue({ chunks: ['{"scores": [1]}'] }, { chunks: ['No idea.'] });
    expect(texts(graphOf(await graphAsk(openaiKb, { hops: 1, relation_ranking: 'generative' })))).toEqual([]);
  });

  it("adds the generative ranking's tokens to the answer's metadata and consumption", async () => {
    llm.enqueue(
      { chunks: ['{"scores": [9]}'], usage: { input: 300, output: 7 } },
      { chunks: ['Angela Merkel.'], usage: { input: 1000, output: 20 } },
    );
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${openaiKb}/ask`, {
      method: 'POST',
      headers: { [pat!.header]: pat!.value, 'content-type': 'application/json', 'x-show-consumption': 'true' },
      body: JSON.stringify({
        query: 'Who did Barack Obama meet?',
        rag_strategies: [{ name: 'graph_beta', hops: 1, relation_text_as_paragraphs: true, relation_ranking: 'generative' }],
      }),
    });
    expect(res.status).toBe(200);
    const items = (await res.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { item: Record<string, unknown> }).item);
    expect(llm.requests).toHaveLength(2);
    expect(items.find((i) => i['type'] === 'metadata')?.['tokens']).toMatchObject({ input: 1300, output: 27 });
    expect(items.find((i) => i['type'] === 'consumption')).toMatchObject({
      normalized_tokens: { input: 1300, output: 27, image: 0 },
      customer_key_tokens: { input: 1300, output: 27, image: 0 },
    });
  });

  it('refuses bad members, and generative ranking without a provider, with 422 at each member', async () => {
    const refused = async (kb: string, strategy: Record<string, unknown>) => {
      const res = await topology.http.call<Detail>('POST', `/api/v1/kb/${kb}/ask`, {
        credential: pat,
        body: { query: 'Who?', rag_strategies: [{ name: 'graph_beta', ...strategy }] },
      });
      expect(res.status).toBe(422);
      return res.body.detail.map((d) => [d.loc.join('.'), d.type]);
    };
    expect(await refused(offlineKb, { hops: 11, top_k: 0, relation_ranking: 'llm', query_entity_detection: 'fuzzy' })).toEqual([
      ['body.rag_strategies.0.hops', 'int_type'],
      ['body.rag_strategies.0.top_k', 'int_type'],
      ['body.rag_strategies.0.relation_ranking', 'enum'],
      ['body.rag_strategies.0.query_entity_detection', 'enum'],
    ]);
    expect(await refused(offlineKb, { top_k: 301 })).toEqual([['body.rag_strategies.0.top_k', 'int_type']]);
    expect(await refused(offlineKb, { relation_ranking: 'generative' })).toEqual([
      ['body.rag_strategies.0.relation_ranking', 'not_supported'],
    ]);
  });
});
