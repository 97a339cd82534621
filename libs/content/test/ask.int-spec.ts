import { AccountsSubjects, ContentSubjects, DomainError, type AskItem } from '@kb/contracts';
import { configureOutbound } from '@kb/platform/net';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

describe('/ask (retrieval, context, generation, citations)', () => {
  let fx: SearchFixture;
  let llm: FakeLlmServer;
  const kbid = '00000000-0000-4000-8000-0000000000cc';
  const providerKb = '00000000-0000-4000-8000-0000000000dd';
  let tides: string;
  let secret: string;

  beforeAll(async () => {
    fx = await startSearchFixture();
    llm = await startFakeLlmServer();
    // As main.ts would from OUTBOUND_ALLOW_CIDRS: the fake provider is on loopback.
    configureOutbound({ policy: { allowCidrs: ['127.0.0.1'] } });
    // The accounts side: the KB model configuration (the provider KB talks to the fake server).
    await fx.bus.handle(AccountsSubjects.resolveKbConfig, async (req) =>
      req.kb_id === providerKb
        ? {
            generative_model: 'gpt-test',
            user_keys: { openai_compat: { url: llm.openAiUrl, key: 'sk-test', model: 'gpt-test', timeout_ms: 1500 } },
          }
        : { generative_model: 'extractive' },
    );
    tides = await fx.addResource(
      kbid,
      { title: 'Ocean tides', slug: 'tides' },
      'The moon pulls the oceans and causes the tides.\n\nSpring tides happen at full moon and new moon.\n\nNeap tides happen at the quarter moons.',
    );
    secret = await fx.addResource(
      kbid,
      { title: 'Board minutes', security: { access_groups: ['board'] } },
      'The moon mining merger closes in March.',
    );
    await fx.addResource(providerKb, { title: 'Volcanoes' }, 'A volcano erupts when magma rises to the surface.');
  }, 180_000);

  afterAll(async () => {
    await llm?.close();
    await fx?.close();
  });

  const ask = async (body: Record<string, unknown>, o: { kb?: string; forced_groups?: string[] } = {}): Promise<AskItem[]> => {
    const items: AskItem[] = [];
    for await (const item of fx.bus.requestStream(ContentSubjects.ask, {
      kbid: o.kb ?? kbid,
      body,
      learning_id: 'l-1',
      ...(o.forced_groups ? { forced_groups: o.forced_groups } : {}),
    }))
      items.push(item);
    return items;
  };
  const of = <T extends AskItem['type']>(items: AskItem[], type: T) =>
    items.filter((i): i is Extract<AskItem, { type: T }> => i.type === type) as (Extract<AskItem, { type: T }> & Record<string, unknown>)[];
  const answerOf = (items: AskItem[]) =>
    of(items, 'answer')
      .map((i) => i['text'])
      .join('');

  it('answers with the built-in extractive generator: verbatim context, true citations, items in order', async () => {
    const items = await ask({ query: 'What causes the tides?' });
    const types = items.map((i) => i.type);
    expect(types.slice(types.lastIndexOf('answer') + 1)).toEqual(['retrieval', 'status', 'augmented_context', 'citations', 'metadata']);
    expect(of(items, 'status')[0]).toMatchObject({ code: '0', status: 'success' });
    const answer = answerOf(items);
    expect(answer).toContain('The moon pulls the oceans and causes the tides.');
    const retrieval = of(items, 'retrieval')[0] as AskItem & { best_matches: { id: string }[] };
    const retrieved = new Set(retrieval.best_matches.map((b) => b.id));
    const citations = of(items, 'citations')[0]?.['citations'] as Record<string, [number, number][]>;
    expect(Object.keys(citations).length).toBeGreaterThan(0);
    for (const [key, spans] of Object.entries(citations)) {
      expect(retrieved.has(key)).toBe(true);
      for (const [s, e] of spans) {
        expect(s).toBeGreaterThanOrEqual(0);
        expect(e).toBeLessThanOrEqual(answer.length);
        expect(e).toBeGreaterThan(s);
      }
    }
  });

  it('keeps resources outside the forced groups out of retrieval, context and citations', async () => {
    const items = await ask({ query: 'moon mining merger', security: { groups: ['board'] }, debug: true }, { forced_groups: ['staff'] });
    const text = JSON.stringify(items);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('merger closes');
    const board = await ask({ query: 'moon mining merger' }, { forced_groups: ['board'] });
    expect(JSON.stringify(board)).toContain(secret);
  });

  it('says so without calling the generator when nothing matches', async () => {
    const before = llm.requests.length;
    const items = await ask({ query: 'zebra quantum xylophone', features: ['keyword'] }, { kb: providerKb });
    expect(items.map((i) => i.type)).toEqual(['status', 'answer', 'retrieval']);
    expect(items[0]).toMatchObject({ code: '-3', status: 'no_retrieval_data' });
    expect(llm.requests.length).toBe(before);
  });

  it('streams a provider answer, and turns provider failures into a status item, never a hang', async () => {
    llm.enqueue({ chunks: ['A volcano erupts ', 'when magma rises to the surface.'], chunkDelayMs: 20 });
    const items = await ask({ query: 'Why does a volcano erupt?' }, { kb: providerKb });
    expect(of(items, 'answer').length).toBe(2);
    expect(of(items, 'status')[0]).toMatchObject({ status: 'success' });
    const request = llm.requests[llm.requests.length - 1];
    expect(request?.headers['authorization']).toBe('Bearer sk-test');
    expect(JSON.stringify(request?.body)).toContain('magma rises');
    expect(Object.keys(of(items, 'citations')[0]?.['citations'] as object)[0]).toMatch(/\/t\/body\//);

    llm.enqueue({ status: 500, errorMessage: 'upstream exploded' });
    const failed = await ask({ query: 'Why does a volcano erupt?' }, { kb: providerKb });
    expect(of(failed, 'status')[0]).toMatchObject({ code: '-1', status: 'error' });
    expect(String(of(failed, 'status')[0]?.['details'])).toContain('provider');

    llm.enqueue({ hang: 'before-headers' });
    const started = Date.now();
    const hung = await ask({ query: 'Why does a volcano erupt?' }, { kb: providerKb });
    expect(of(hung, 'status')[0]).toMatchObject({ status: 'error' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('extends the context with neighbouring paragraphs and the resource title (hierarchy)', async () => {
    const items = await ask({
      query: 'neap tides quarter',
      features: ['keyword'],
      top_k: 1,
      rag_strategies: [{ name: 'neighbouring_paragraphs', before: 1, after: 0 }, { name: 'hierarchy' }],
    });
    const augmented = of(items, 'augmented_context')[0]?.['augmented'] as {
      paragraphs: Record<string, { augmentation_type: string; text: string }>;
    };
    const added = Object.values(augmented.paragraphs);
    expect(added.some((p) => p.augmentation_type === 'neighbouring_paragraphs' && p.text.includes('Spring tides'))).toBe(true);
    expect(added.every((p) => p.text.startsWith('Ocean tides'))).toBe(true);
    expect(tides).toBeTruthy();
  });

  it('refuses what it cannot do, naming each member, before streaming anything', async () => {
    const err = await ask({
      query: 'tides',
      answer_json_schema: { type: 'object' },
      rag_strategies: [{ name: 'full_resource' }, { name: 'hierarchy' }, { name: 'graph_beta', hops: 0 }],
      reasoning: 'always',
      bogus: 1,
      citations: 'sometimes',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    const locs = ((err as DomainError).details?.['detail'] as { loc: (string | number)[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining(['body.rag_strategies', 'body.rag_strategies.2.hops', 'body.reasoning', 'body.bogus', 'body.citations']),
    );
  });

  it('records feedback against a learning id and validates it', async () => {
    await expect(
      fx.bus.request(ContentSubjects.feedback, { kbid, body: { ident: 'l-1', good: true, task: 'CHAT', feedback: 'great' } }),
    ).resolves.toEqual({});
    await expect(fx.bus.request(ContentSubjects.feedback, { kbid, body: { good: 'yes' } as never })).rejects.toBeInstanceOf(DomainError);
  });
});
