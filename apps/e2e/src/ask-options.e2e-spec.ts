import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { bearer, type Credential } from './support/http-client';
import { kbAnsweringWith } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Line = {
  item: {
    type: string;
    text?: string;
    object?: unknown;
    status?: string;
    details?: string;
    results?: { query: string; rephrased_query: string | null };
    relations?: { entities: Record<string, unknown> };
  };
};
type Detail = { detail: { loc: (string | number)[]; type: string }[] };

/**
 * The /ask and /find options that reach a generative model, over HTTP on the standalone service:
 * rephrase, answer_json_schema, reasoning and the relations feature, each with a provider (a local
 * server speaking the OpenAI and Anthropic protocols), without one (the built-in model), and refused.
 */
describe('ask options through the gateway (standalone)', () => {
  let topology: Topology;
  let llm: FakeLlmServer;
  let pat: Credential;
  let offlineKb: string;
  let openaiKb: string;
  let anthropicKb: string;
  const month = new Date().toISOString().slice(0, 7);
  /** Resource ids of each KB, in creation order (Presidents, Bread). */
  const rids: Record<string, string[]> = {};

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    topology = await startStandalone();
    pat = bearer(topology.bootstrap().personal_access_token.token);
    offlineKb = await kbAnsweringWith(topology, pat, 'offline-kb', 'offline');
    openaiKb = await kbAnsweringWith(topology, pat, 'openai-kb', 'openai', llm);
    anthropicKb = await kbAnsweringWith(topology, pat, 'anthropic-kb', 'anthropic', llm);
    const texts = [
      ['Presidents', 'Barack Obama met Angela Merkel in Berlin.\n\nHe gave a speech at the Brandenburg Gate.'],
      ['Bread', 'Yeast ferments the dough so the bread rises.'],
    ];
    for (const kb of [offlineKb, openaiKb, anthropicKb]) {
      for (const [title, body] of texts) {
        const created = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
          credential: pat,
          body: { title, texts: { body: { body } } },
        });
        expect(created.status).toBe(201);
        (rids[kb] ??= []).push(created.body.uuid);
      }
      await topology.http.eventually(
        async () => {
          const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
            credential: pat,
          });
          return list.body.resources.length === texts.length && list.body.resources.every((r) => r.metadata.status === 'PROCESSED')
            ? true
            : undefined;
        },
        90_000,
        'every resource processed',
      );
    }
    // The provider KBs' fields get question/answer pairs from the fake provider: those calls end before the tests script its answers.
    await topology.http.eventually(
      async () => (llm.requests.filter((r) => JSON.stringify(r.body).includes('question and answer pairs')).length >= 4 ? true : undefined),
      30_000,
      'question/answer calls',
    );
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
  }, 60_000);
  beforeEach(() => llm.reset());

  const ask = async (kb: string, body: Record<string, unknown>): Promise<Line['item'][]> => {
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/ask`, {
      method: 'POST',
      headers: { [pat!.header]: pat!.value, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as Line).item);
  };
  const syncAsk = (kb: string, body: Record<string, unknown>) =>
    topology.http.call<Record<string, unknown> & Detail>('POST', `/api/v1/kb/${kb}/ask`, {
      credential: pat,
      headers: { 'x-synchronous': 'true' },
      body,
    });
  const refused = async (kb: string, body: Record<string, unknown>, path = 'ask') => {
    const res = await topology.http.call<Detail>('POST', `/api/v1/kb/${kb}/${path}`, { credential: pat, body });
    expect(res.status).toBe(422);
    return res.body.detail.map((d) => [d.loc.join('.'), d.type]);
  };
  const history = [
    { author: 'USER', text: 'Who is Barack Obama?' },
    { author: 'NUCLIA', text: 'A president.' },
  ];

  it('rephrase: by the rules without a provider, reported in the retrieval results and the chat activity event', async () => {
    const items = await ask(offlineKb, { query: 'Where did he meet Angela Merkel?', chat_history: history, rephrase: true });
    expect(items.find((i) => i.type === 'retrieval')?.results).toMatchObject({
      query: 'Where did he meet Angela Merkel?',
      rephrased_query: 'Where did Barack Obama meet Angela Merkel?',
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    const logged = await topology.http.eventually(
      async () => {
        const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${offlineKb}/activity/chat/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [pat!.header]: pat!.value },
          body: JSON.stringify({ year_month: month, filters: {}, show: ['question', 'rephrased_question'] }),
        });
        const rows = (await res.text())
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { question?: string; rephrased_question?: string });
        return rows.find((r) => r.rephrased_question === 'Where did Barack Obama meet Angela Merkel?');
      },
      20_000,
      'chat event with the rephrased question',
    );
    expect(logged.question).toBe('Where did he meet Angela Merkel?');
  });

  it("rephrase: through the KB's provider on /ask (prompt.rephrase) and /find (rephrase_prompt); bad prompts refused", async () => {
    llm.enqueue({ chunks: ['Barack Obama Berlin meeting'] }, { chunks: ['In Berlin.'] });
    const items = await ask(openaiKb, {
      query: 'Where did he meet her?',
      chat_history: history,
      rephrase: true,
      prompt: { rephrase: 'Standalone query for: {question}' },
    });
    expect(items.find((i) => i.type === 'retrieval')?.results?.rephrased_query).toBe('Barack Obama Berlin meeting');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Standalone query for: Where did he meet her?');
    expect(
      items
        .filter((i) => i.type === 'answer')
        .map((i) => i.text)
        .join(''),
    ).toBe('In Berlin.');
    llm.enqueue({ chunks: ['yeast dough'] });
    const found = await topology.http.call<{ query: string; rephrased_query: string }>('POST', `/api/v1/kb/${openaiKb}/find`, {
      credential: pat,
      body: { query: 'why does it rise', rephrase: true, rephrase_prompt: 'Keywords: {question}' },
    });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ query: 'why does it rise', rephrased_query: 'yeast dough' });
    const offline = await topology.http.call<{ rephrased_query: string }>('GET', `/api/v1/kb/${offlineKb}/find?query=bread&rephrase=true`, {
      credential: pat,
    });
    expect(offline.body.rephrased_query).toBe('bread');
    expect(await refused(openaiKb, { query: 'q', rephrase: true, prompt: { rephrase: 'no placeholder' } })).toEqual([
      ['body.prompt.rephrase', 'value_error'],
    ]);
    expect(await refused(openaiKb, { query: 'q', rephrase: 'yes', rephrase_prompt: 'x'.repeat(10_001) }, 'find')).toEqual([
      ['body.rephrase', 'bool_type'],
      ['body.rephrase_prompt', 'string_too_long'],
    ]);
    expect(await refused(openaiKb, { query: 'q', rephrase: true }, 'suggest')).toEqual([['body.rephrase', 'not_supported']]);
  });

  type Hits = { query: string; results: { rid: string }[] };
  const search = (kb: string, body: Record<string, unknown>) =>
    topology.http.call<{ rephrased_query?: string; paragraphs: Hits; fulltext: Hits } & Detail>('POST', `/api/v1/kb/${kb}/search`, {
      credential: pat,
      body,
    });

  it("rephrase on /search: the KB's provider rewrites the query retrieval uses, the rules without one; bad prompts refused", async () => {
    const body = { query: 'why does it go up', features: ['keyword', 'fulltext'] };
    const plain = await search(openaiKb, body);
    expect(plain.status).toBe(200);
    expect(plain.body.paragraphs.results).toEqual([]);
    expect(plain.body).not.toHaveProperty('rephrased_query');
    expect(llm.requests).toHaveLength(0);

    llm.enqueue({ chunks: ['Query: "yeast dough"'] });
    const found = await search(openaiKb, { ...body, rephrase: true, rephrase_prompt: 'Keywords for: {question}' });
    expect(found.status).toBe(200);
    expect(found.body.rephrased_query).toBe('yeast dough');
    expect(found.body.paragraphs.query).toBe('why does it go up');
    expect(new Set(found.body.paragraphs.results.map((r) => r.rid))).toEqual(new Set([rids[openaiKb]?.[1]]));
    expect(new Set(found.body.fulltext.results.map((r) => r.rid))).toEqual(new Set([rids[openaiKb]?.[1]]));
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Keywords for: why does it go up');

    // A provider that fails: the rules rephrase (no history: the query as it is), and the search answers.
    llm.enqueue({ status: 500 });
    const failed = await search(openaiKb, { ...body, rephrase: true });
    expect(failed.status).toBe(200);
    expect(failed.body.rephrased_query).toBe('why does it go up');

    const offline = await topology.http.call<{ rephrased_query: string; paragraphs: Hits }>(
      'GET',
      `/api/v1/kb/${offlineKb}/search?query=bread&rephrase=true&features=keyword`,
      { credential: pat },
    );
    expect(offline.status).toBe(200);
    expect(offline.body.rephrased_query).toBe('bread');
    expect(new Set(offline.body.paragraphs.results.map((r) => r.rid))).toEqual(new Set([rids[offlineKb]?.[1]]));

    expect(
      await refused(openaiKb, { query: 'q', rephrase: 'yes', rephrase_prompt: 'no placeholder', generative_model: 3 }, 'search'),
    ).toEqual([
      ['body.rephrase', 'bool_type'],
      ['body.rephrase_prompt', 'value_error'],
      ['body.generative_model', 'string_type'],
    ]);
    const get = await topology.http.call<Detail>('GET', `/api/v1/kb/${openaiKb}/search?query=q&rephrase=true&rephrase_prompt=nope`, {
      credential: pat,
    });
    expect(get.status).toBe(422);
    expect(get.body.detail.map((d) => [d.loc.join('.'), d.type])).toEqual([['query.rephrase_prompt', 'value_error']]);
    expect(llm.requests).toHaveLength(2);
  });

  it("rephrase in prequeries: each prequery that asks it is rewritten with the /ask's chat history, by its model or the /ask's", async () => {
    const prequeries = (request: Record<string, unknown>) => [
      { name: 'prequeries', queries: [{ id: 'pq', request: { features: ['keyword'], ...request } }, { request: { query: 'bread' } }] },
    ];
    const resultsOf = (items: Line['item'][]) =>
      (
        items.find((i) => i.type === 'prequeries') as unknown as {
          results: Record<string, { query: string; rephrased_query: string | null }>;
        }
      ).results;

    const offline = await ask(offlineKb, {
      query: 'What did he do?',
      chat_history: history,
      rag_strategies: prequeries({ query: 'Where did he give a speech?', rephrase: true }),
    });
    expect(resultsOf(offline)['pq']).toMatchObject({
      query: 'Where did he give a speech?',
      rephrased_query: 'Where did Barack Obama give a speech?',
    });
    expect(resultsOf(offline)['prequery_1']).toMatchObject({ query: 'bread', rephrased_query: null });

    llm.enqueue({ chunks: ['Brandenburg Gate speech'] }, { chunks: ['He spoke.'] });
    const provider = await ask(openaiKb, {
      query: 'What did he do?',
      chat_history: history,
      rag_strategies: prequeries({ query: 'Where was it?', rephrase: true, rephrase_prompt: 'Prequery: {question}' }),
    });
    expect(resultsOf(provider)['pq']?.rephrased_query).toBe('Brandenburg Gate speech');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Prequery: Where was it?');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Who is Barack Obama?');
    expect(llm.requests).toHaveLength(2);

    const bad = await refused(openaiKb, { query: 'q', rag_strategies: prequeries({ query: 'q', rephrase: true, rephrase_prompt: 'x' }) });
    expect(bad).toEqual([[expect.stringMatching(/queries\.0\.request\.rephrase_prompt$/), 'value_error']]);
  });

  it('answer_json_schema: an answer_json item from OpenAI-compatible and Anthropic providers, answer_json in the sync response', async () => {
    const schema = {
      name: 'meeting',
      description: 'Where they met',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    llm.enqueue({ chunks: ['{"city":', ' "Berlin"}'] });
    const items = await ask(openaiKb, { query: 'Where did Barack Obama meet Angela Merkel?', answer_json_schema: schema });
    expect(items.map((i) => i.type)).toEqual(['answer_json', 'retrieval', 'status', 'augmented_context', 'metadata']);
    expect(items[0]?.object).toEqual({ city: 'Berlin' });
    expect((llm.requests[0]?.body as { response_format: unknown }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'meeting', description: 'Where they met', schema: schema.parameters },
    });
    llm.enqueue({ chunks: ['{"city": "Berlin"}'] });
    const sync = await syncAsk(anthropicKb, { query: 'Where did Barack Obama meet Angela Merkel?', answer_json_schema: schema });
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({ answer_json: { city: 'Berlin' }, status: 'success', citations: {} });
    expect((llm.requests[1]?.body as { tool_choice: unknown }).tool_choice).toEqual({ type: 'tool', name: 'meeting' });
  });

  it('answer_json_schema: refused without a provider, and when unbounded or pointing outside itself', async () => {
    expect(await refused(offlineKb, { query: 'q', answer_json_schema: { type: 'object' } })).toEqual([
      ['body.answer_json_schema', 'not_supported'],
    ]);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10; i++) deep = { type: 'object', properties: { x: deep } };
    expect(await refused(openaiKb, { query: 'q', answer_json_schema: deep })).toEqual([['body.answer_json_schema', 'too_long']]);
    expect(await refused(openaiKb, { query: 'q', answer_json_schema: { type: 'object', description: 'x'.repeat(20_000) } })).toEqual([
      ['body.answer_json_schema', 'too_long'],
    ]);
    expect(
      await refused(openaiKb, {
        query: 'q',
        answer_json_schema: { type: 'object', properties: { a: { $ref: 'https://example.org/s.json' } } },
      }),
    ).toEqual([['body.answer_json_schema', 'value_error']]);
    expect(llm.requests).toHaveLength(0);
  });

  it('reasoning: streamed reasoning items from OpenAI-compatible deltas and Anthropic thinking blocks, folded into the sync response', async () => {
    llm.enqueue({ reasoning: ['The passage ', 'says Berlin.'], chunks: ['Berlin.'] });
    const items = await ask(openaiKb, { query: 'Where did Barack Obama meet Angela Merkel?', reasoning: { effort: 'high' } });
    expect(
      items
        .filter((i) => i.type === 'reasoning')
        .map((i) => i.text)
        .join(''),
    ).toBe('The passage says Berlin.');
    expect((llm.requests[0]?.body as { reasoning_effort: unknown }).reasoning_effort).toBe('high');
    llm.enqueue({ reasoning: ['Thinking ', 'it over.'], chunks: ['Berlin.'] });
    const sync = await syncAsk(anthropicKb, { query: 'Where did Barack Obama meet Angela Merkel?', reasoning: true });
    expect(sync.body).toMatchObject({ answer: 'Berlin.', reasoning: 'Thinking it over.', status: 'success' });
    expect((llm.requests[1]?.body as { thinking: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    const offline = await syncAsk(offlineKb, { query: 'Where did Barack Obama meet Angela Merkel?', reasoning: true });
    expect(offline.body.status).toBe('success');
    expect(offline.body['reasoning']).toBeUndefined();
    expect(await refused(openaiKb, { query: 'q', reasoning: { budget_tokens: 10, effort: 'max' } })).toEqual([
      ['body.reasoning.effort', 'enum'],
      ['body.reasoning.budget_tokens', 'int_type'],
    ]);
  });

  it('relations: the relations item with the relations feature, and relations in the sync response', async () => {
    const items = await ask(offlineKb, { query: 'Where did Barack Obama go?', features: ['keyword', 'relations'] });
    const relations = items.find((i) => i.type === 'relations')?.relations;
    expect(Object.keys(relations?.entities ?? {})).toContain('Barack Obama');
    const sync = await syncAsk(offlineKb, { query: 'Where did Barack Obama go?', features: ['keyword', 'relations'] });
    expect(sync.body['relations']).toEqual(relations);
    expect(await refused(offlineKb, { query: 'q', features: ['graph'] })).toEqual([['body.features.0', 'enum']]);
  });

  it("summarize: extractive summaries without a provider, the provider's with one; unknown resources 404, bad input 422", async () => {
    type Summaries = { resources: Record<string, { summary: string; tokens: number }>; summary: string; consumption: unknown };
    const [presidents, bread] = rids[offlineKb] as [string, string];
    const offline = await topology.http.call<Summaries>('POST', `/api/v1/kb/${offlineKb}/summarize`, {
      credential: pat,
      body: { resources: [presidents, bread] },
    });
    expect(offline.status).toBe(200);
    expect(offline.body.resources[presidents]?.summary).toContain('Barack Obama met Angela Merkel in Berlin.');
    expect(offline.body.resources[bread]?.summary).toBe('Yeast ferments the dough so the bread rises.');
    expect(offline.body.summary).toContain('Barack Obama');
    expect(offline.body.consumption).toBeNull();
    const [p2] = rids[openaiKb] as [string];
    llm.enqueue({ chunks: ['Obama met Merkel', ' in Berlin.'], usage: { input: 50, output: 6 } });
    const viaModel = await topology.http.call<Summaries>('POST', `/api/v1/kb/${openaiKb}/summarize`, {
      credential: pat,
      body: { resources: [p2], summary_kind: 'extended', user_prompt: 'One line, please.' },
    });
    expect(viaModel.status).toBe(200);
    expect(viaModel.body).toMatchObject({
      resources: { [p2]: { summary: 'Obama met Merkel in Berlin.', tokens: 6 } },
      summary: 'Obama met Merkel in Berlin.',
      consumption: { normalized_tokens: { input: 50, output: 6, image: 0 } },
    });
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('One line, please.');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Brandenburg Gate');
    const missing = await topology.http.call('POST', `/api/v1/kb/${offlineKb}/summarize`, { credential: pat, body: { resources: [p2] } });
    expect(missing.status).toBe(404);
    const bad = await topology.http.call<Detail>('POST', `/api/v1/kb/${offlineKb}/summarize`, {
      credential: pat,
      body: { resources: ['x', 3], summary_kind: 'short', other: 1 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => [d.loc.join('.'), d.type])).toEqual([
      ['body.resources.0', 'uuid_parsing'],
      ['body.resources.1', 'uuid_parsing'],
      ['body.summary_kind', 'enum'],
      ['body.other', 'extra_forbidden'],
    ]);
    expect(
      (
        await topology.http.call<Detail>('POST', `/api/v1/kb/${offlineKb}/summarize`, {
          credential: pat,
          body: { resources: Array(21).fill(presidents) },
        })
      ).status,
    ).toBe(422);
    expect((await topology.http.call('POST', `/api/v1/kb/${offlineKb}/summarize`, { body: { resources: [presidents] } })).status).toBe(401);
  });
});
