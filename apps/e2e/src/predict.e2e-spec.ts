import OpenAI from 'openai';
import { startFakeEmbeddingServer, startFakeLlmServer, type FakeEmbeddingServer, type FakeLlmServer } from '@kb/platform/testing';
import { apiKey, bearer, type Credential } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Chunk = { chunk: { type: string; text?: string; code?: string; details?: string; input_tokens?: number } };

/**
 * The predict API through the gateway (docs/predict.md), on the standalone service: the default
 * KB's built-in models (USE-lite, extractive generator, lexical reranker, offline REMi), a KB whose
 * generative model is a local server speaking OpenAI's protocol, one whose provider fails, and the
 * OpenAI-compatible routes driven by the `openai` SDK itself.
 */
describe('predict API through the gateway (standalone)', () => {
  let topology: Topology;
  let llm: FakeLlmServer;
  let broken: FakeLlmServer;
  let embeddings: FakeEmbeddingServer;
  let embedKb: string;
  let embedReader: NonNullable<Credential>;
  let kb: string;
  let llmKb: string;
  let brokenKb: string;
  let reader: NonNullable<Credential>;
  let llmReader: NonNullable<Credential>;
  let brokenReader: NonNullable<Credential>;
  let pat: NonNullable<Credential>;
  let ua: NonNullable<Credential>;
  let baseUrl: string;

  const call = <T = unknown>(method: string, path: string, credential: Credential, body?: unknown) =>
    topology.http.call<T>(method, path, { credential, body });
  const ndjson = (text: string): Chunk[] =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Chunk);

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    broken = await startFakeLlmServer({ status: 500, errorMessage: 'upstream-secret-body-7f3a' });
    embeddings = await startFakeEmbeddingServer(64);
    topology = await startStandalone();
    baseUrl = topology.http.baseUrl;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    kb = boot.kb.id;
    const createKb = async (slug: string, learning_configuration: Record<string, unknown>) => {
      const res = await call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, pat, {
        slug,
        title: slug,
        learning_configuration,
      });
      expect(res.status).toBe(201);
      return (res.body.uuid ?? res.body.id) as string;
    };
    llmKb = await createKb('predict-llm', {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: llm.openAiUrl, key: 'sk-predict', timeout_ms: 5000 } },
    });
    brokenKb = await createKb('predict-broken', {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: broken.openAiUrl, key: 'sk-broken', timeout_ms: 5000 } },
    });
    const readerKey = async (kbid: string) => {
      const sa = await call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kbid}/service_accounts`, pat, {
        title: 'predict',
        role: 'SMEMBER',
      });
      const key = await call<{ token: string }>(
        'POST',
        `/api/v1/account/${boot.account.id}/kb/${kbid}/service_account/${sa.body.id}/keys`,
        pat,
        { expires: new Date(Date.now() + 86_400_000).toISOString() },
      );
      return apiKey(key.body.token);
    };
    embedKb = await createKb('predict-embed', {
      semantic_models: ['hf_embedding', 'en-use-lite-2024'],
      default_semantic_model: 'hf_embedding',
      user_keys: { openai_compatible: { url: embeddings.url, key: 'sk-embed', model: 'toy-embed', size: 64 } },
    });
    reader = await readerKey(kb);
    embedReader = await readerKey(embedKb);
    llmReader = await readerKey(llmKb);
    brokenReader = await readerKey(brokenKb);
    const client = await call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, pat, {
      contact: 'predict@example.com',
    });
    ua = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
    await broken?.close();
    await embeddings?.close();
  }, 60_000);

  beforeEach(() => llm.reset());

  it("embeds one text (sentence) and a batch (sentences) with the KB's built-in model, and the vectors agree", async () => {
    const one = await call<{ data: number[]; time: number }>(
      'GET',
      `/api/v1/kb/${kb}/predict/sentence?text=${encodeURIComponent('The moon pulls the tides.')}`,
      reader,
    );
    expect(one.status).toBe(200);
    expect(one.body.data.length).toBeGreaterThan(100);
    expect(typeof one.body.time).toBe('number');
    const batch = await call<{ data: number[][]; model: string }>('POST', `/api/v1/kb/${kb}/predict/sentences`, reader, {
      texts: ['The moon pulls the tides.', 'Bread rises in the oven.'],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.model).toBe('en-use-lite-2024');
    expect(batch.body.data).toHaveLength(2);
    expect(batch.body.data[0]).toHaveLength(one.body.data.length);
    const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
    expect(cos(one.body.data, batch.body.data[0] as number[])).toBeGreaterThan(cos(one.body.data, batch.body.data[1] as number[]));
  });

  it("embeds with the KB's OpenAI-compatible provider model (by its id or the provider's name) and its other semantic model", async () => {
    const before = embeddings.requests.length;
    const dflt = await call<{ data: number[] }>('GET', `/api/v1/kb/${embedKb}/predict/sentence?text=tides`, embedReader);
    expect(dflt.status).toBe(200);
    expect(dflt.body.data).toHaveLength(64);
    expect(embeddings.requests.slice(before).map((r) => r.authorization)).toContain('Bearer sk-embed');
    for (const model of ['hf_embedding', 'toy-embed']) {
      const res = await call<{ data: number[][]; model: string }>('POST', `/api/v1/kb/${embedKb}/predict/sentences`, embedReader, {
        texts: ['tides'],
        model,
      });
      expect([model, res.status, res.body.data[0]?.length]).toEqual([model, 200, 64]);
    }
    const builtIn = await call<{ data: number[] }>(
      'GET',
      `/api/v1/kb/${embedKb}/predict/sentence?text=tides&model=en-use-lite-2024`,
      embedReader,
    );
    expect(builtIn.body.data).toHaveLength(512);
    const compat = await call<{ data: { embedding: number[] }[]; model: string }>(
      'POST',
      `/api/v1/kb/${embedKb}/predict/compat/embeddings`,
      embedReader,
      { input: 'tides', model: 'hf_embedding' },
    );
    expect(compat.status).toBe(200);
    expect(compat.body.data[0]?.embedding).toHaveLength(64);
    const models = await call<{ data: { id: string }[] }>('GET', `/api/v1/kb/${embedKb}/predict/compat/models`, embedReader);
    expect(models.body.data.map((m) => m.id)).toEqual(['extractive', 'hf_embedding', 'en-use-lite-2024']);
  });

  it('finds entities (tokens) and answers query with language, threshold, entities and vector', async () => {
    const text = 'Ada Lovelace wrote to ada@example.com from London.';
    const tokens = await call<{ tokens: { text: string; ner: string; start: number; end: number }[] }>(
      'GET',
      `/api/v1/kb/${kb}/predict/tokens?text=${encodeURIComponent(text)}`,
      reader,
    );
    expect(tokens.status).toBe(200);
    const email = tokens.body.tokens.find((t) => t.ner === 'EMAIL');
    expect(email).toMatchObject({ text: 'ada@example.com' });
    expect(text.slice(email?.start, email?.end)).toBe('ada@example.com');
    for (const [method, res] of [
      ['GET', await call<Record<string, unknown>>('GET', `/api/v1/kb/${kb}/predict/query?text=${encodeURIComponent(text)}`, reader)],
      ['POST', await call<Record<string, unknown>>('POST', `/api/v1/kb/${kb}/predict/query`, reader, { text })],
    ] as const) {
      expect([method, res.status]).toEqual([method, 200]);
      expect(res.body).toMatchObject({
        language: 'en',
        query: text,
        visual_llm: false,
        semantic_thresholds: { 'en-use-lite-2024': expect.any(Number) },
      });
      expect((res.body['sentence'] as { data: number[] }).data.length).toBeGreaterThan(100);
      expect((res.body['entities'] as { tokens: unknown[] }).tokens).toEqual(
        expect.arrayContaining([expect.objectContaining({ ner: 'EMAIL' })]),
      );
    }
  });

  it('chats offline: the extractive model answers from query_context, streamed as NDJSON chunks', async () => {
    const res = await fetch(`${baseUrl}/api/v1/kb/${kb}/predict/chat`, {
      method: 'POST',
      headers: { [reader.header]: reader.value, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({
        question: 'What causes the tides?',
        user_id: 'u',
        query_context: { a: 'The moon pulls the oceans and causes the tides.', b: 'Bread rises in a warm oven.' },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const chunks = ndjson(await res.text());
    const answer = chunks
      .filter((c) => c.chunk.type === 'text')
      .map((c) => c.chunk.text)
      .join('');
    expect(answer).toBe('The moon pulls the oceans and causes the tides.');
    expect(chunks.map((c) => c.chunk.type).slice(-2)).toEqual(['meta', 'status']);
    expect(chunks.at(-1)?.chunk.code).toBe('0');

    // Without asking for NDJSON (the reference's synchronous clients): the plain answer, then its status code.
    const plain = await fetch(`${baseUrl}/api/v1/kb/${kb}/predict/chat`, {
      method: 'POST',
      headers: { [reader.header]: reader.value, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What causes the tides?', query_context: ['The moon pulls the oceans and causes the tides.'] }),
    });
    expect(plain.headers.get('content-type')).toContain('text/plain');
    expect(await plain.text()).toBe('The moon pulls the oceans and causes the tides.0');
  });

  it("chats with the KB's provider model, and its failures come back without the provider's body", async () => {
    const res = await fetch(`${baseUrl}/api/v1/kb/${llmKb}/predict/chat`, {
      method: 'POST',
      headers: { [llmReader.header]: llmReader.value, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ question: 'Say hello', query_context: ['Greetings are polite.'], max_tokens: 50 }),
    });
    expect(res.status).toBe(200);
    const chunks = ndjson(await res.text());
    expect(
      chunks
        .filter((c) => c.chunk.type === 'text')
        .map((c) => c.chunk.text)
        .join(''),
    ).toBe('Hello world');
    expect(chunks.at(-1)?.chunk).toEqual({ type: 'status', code: '0' });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.headers['authorization']).toBe('Bearer sk-predict');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Greetings are polite.');

    const failed = await call<{ detail: string }>('POST', `/api/v1/kb/${brokenKb}/predict/chat`, brokenReader, {
      question: 'Say hello',
      query_context: ['x'],
    });
    expect(failed.status).toBe(503);
    expect(failed.body.detail).toMatch(/provider/i);
    expect(JSON.stringify(failed.body)).not.toContain('upstream-secret-body-7f3a');
  });

  it('summarizes offline (the most central sentences) and rephrases against the conversation without a model', async () => {
    const text =
      'Tides rise and fall twice a day. The moon pulls the oceans and so causes the tides. Spring tides come with the full moon. Cats sleep a lot.';
    const sum = await call<{ resources: Record<string, { summary: string; tokens: number }>; summary: string }>(
      'POST',
      `/api/v1/kb/${kb}/predict/summarize`,
      reader,
      { resources: { r1: { fields: { body: text } } } },
    );
    expect(sum.status).toBe(200);
    const summary = sum.body.resources['r1']?.summary ?? '';
    expect(summary).toContain('tides');
    expect(summary).not.toContain('Cats');
    expect(sum.body.summary).toBe(summary);

    const history = [
      { author: 'USER', text: 'What causes the ocean tides?' },
      { author: 'NUCLIA', text: 'The moon.' },
    ];
    const rephrased = await call<string>('POST', `/api/v1/kb/${kb}/predict/rephrase`, reader, {
      question: 'When are they strongest?',
      context: history,
    });
    expect(rephrased.status).toBe(200);
    expect(rephrased.body).toBe('When are they strongest? (causes ocean tides)');
    const alone = await call<string>('POST', `/api/v1/kb/${kb}/predict/rephrase`, reader, {
      question: 'When are spring tides strongest?',
      context: history,
    });
    expect(alone.body).toBe('When are spring tides strongest?');
  });

  it("rephrases and summarizes with the KB's provider model", async () => {
    llm.enqueue({ chunks: ['When are ocean tides strongest?'] });
    const rephrased = await call<string>('POST', `/api/v1/kb/${llmKb}/predict/rephrase`, llmReader, {
      question: 'When are they strongest?',
      context: [{ author: 'USER', text: 'What causes ocean tides?' }],
    });
    expect(rephrased.status).toBe(200);
    expect(rephrased.body).toBe('When are ocean tides strongest?');
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('What causes ocean tides?');
    llm.enqueue({ chunks: ['The moon causes tides.'] });
    const sum = await call<{ summary: string }>('POST', `/api/v1/kb/${llmKb}/predict/summarize`, llmReader, {
      resources: { r: { fields: { f: 'Long text about the moon and the tides.' } } },
    });
    expect(sum.status).toBe(200);
    expect(sum.body.summary).toBe('The moon causes tides.');
  });

  it('reranks context pieces and scores an answer with REMi', async () => {
    const rerank = await call<{ context_scores: Record<string, number> }>('POST', `/api/v1/kb/${kb}/predict/rerank`, reader, {
      question: 'what causes the tides',
      user_id: 'u',
      context: { good: 'The moon causes the tides of the oceans.', bad: 'Bread rises in a warm oven.' },
    });
    expect(rerank.status).toBe(200);
    expect(rerank.body.context_scores['good']).toBeGreaterThan(rerank.body.context_scores['bad'] as number);
    const remi = await call<{
      answer_relevance: { score: number; reason: string };
      context_relevance: number[];
      groundedness: number[];
      time: number;
    }>('POST', `/api/v1/kb/${kb}/predict/remi`, reader, {
      user_id: 'u',
      question: 'What causes the tides?',
      answer: 'The moon causes the tides.',
      contexts: ['The moon pulls the oceans and causes the tides.', 'Bread rises in a warm oven.'],
    });
    expect(remi.status).toBe(200);
    expect(remi.body.context_relevance).toHaveLength(2);
    expect(remi.body.context_relevance[0]).toBeGreaterThan(remi.body.context_relevance[1] as number);
    expect(remi.body.groundedness[0]).toBeGreaterThanOrEqual(3);
    expect(remi.body.answer_relevance.score).toBeGreaterThanOrEqual(3);
    const onlyContexts = await call<Record<string, unknown>>('POST', `/api/v1/kb/${kb}/predict/remi`, reader, { contexts: ['x'] });
    expect(onlyContexts.body).toMatchObject({ answer_relevance: null, context_relevance: null, groundedness: null });
  });

  it('serves the OpenAI SDK: models, embeddings (float and base64) and chat completions (plain and streamed)', async () => {
    // The SDK sends its key as Authorization; the KB's API key goes in the service's own header instead.
    const openai = (kbid: string, key: NonNullable<Credential>) =>
      new OpenAI({
        apiKey: 'unused',
        baseURL: `${baseUrl}/api/v1/kb/${kbid}/predict/compat`,
        defaultHeaders: { Authorization: null, [key.header]: key.value },
        maxRetries: 0,
      });
    const offline = openai(kb, reader);
    const models = await offline.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['extractive', 'en-use-lite-2024']);

    const floats = await offline.embeddings.create({
      input: ['The moon pulls the tides.', 'Bread.'],
      model: 'en-use-lite-2024',
      encoding_format: 'float',
    });
    expect(floats.data).toHaveLength(2);
    // The SDK asks for base64 when no format is given and decodes it to floats itself.
    const decoded = await offline.embeddings.create({ input: 'The moon pulls the tides.', model: 'text-embedding-3-small' });
    const a = floats.data[0]?.embedding as number[];
    const b = decoded.data[0]?.embedding as number[];
    expect(b).toHaveLength(a.length);
    expect(Math.max(...a.map((x, i) => Math.abs(x - (b[i] as number))))).toBeLessThan(1e-6);

    const answer = await offline.chat.completions.create({
      model: 'extractive',
      messages: [
        { role: 'system', content: 'The moon pulls the oceans and causes the tides. Bread rises.' },
        { role: 'user', content: 'What causes the tides?' },
      ],
    });
    expect(answer.choices[0]?.message.content).toBe('The moon pulls the oceans and causes the tides.');
    expect(answer.object).toBe('chat.completion');

    const withLlm = openai(llmKb, llmReader);
    const stream = await withLlm.chat.completions.create({
      model: 'chatgpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('Hello world');
    expect(finish).toBe('stop');
    const plain = await withLlm.chat.completions.create({ model: '', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(plain.choices[0]?.message.content).toBe('Hello world');
    expect(plain.usage?.completion_tokens).toBeGreaterThan(0);

    // A personal access token works as the SDK's own key (Authorization: Bearer).
    const byPat = new OpenAI({
      apiKey: pat.value.replace(/^Bearer /, ''),
      baseURL: `${baseUrl}/api/v1/kb/${kb}/predict/compat`,
      maxRetries: 0,
    });
    expect((await byPat.models.list()).data.length).toBe(2);
  });

  it("lists the KB's models: generative_providers, models and one model", async () => {
    type Providers = {
      providers: Record<string, { title: string; enterprise_readiness: boolean; models: Record<string, { name: string }> }>;
    };
    const providers = await call<Providers>('GET', `/api/v1/kb/${llmKb}/generative_providers`, llmReader);
    expect(providers.status).toBe(200);
    const ids = (p: Providers) => Object.fromEntries(Object.entries(p.providers).map(([k, v]) => [k, Object.keys(v.models)]));
    expect(ids(providers.body)).toEqual({ builtin: ['extractive'], openai: ['chatgpt-4o-mini'] });
    expect(providers.body.providers['openai']).toMatchObject({
      title: 'OpenAI',
      enterprise_readiness: false,
      models: { 'chatgpt-4o-mini': { name: 'chatgpt-4o-mini', title: 'chatgpt-4o-mini', features: { streaming: true } } },
    });
    expect(ids((await call<Providers>('GET', `/api/v1/kb/${kb}/generative_providers`, reader)).body)).toEqual({ builtin: ['extractive'] });
    const models = await call<{ model_id: string; model_type: string; default: boolean }[]>('GET', `/api/v1/kb/${llmKb}/models`, llmReader);
    expect(models.body).toEqual([
      { model_id: 'chatgpt-4o-mini', model_type: 'generative', title: 'chatgpt-4o-mini', default: true },
      { model_id: 'en-use-lite-2024', model_type: 'semantic', title: 'en-use-lite-2024', default: true },
    ]);
    expect((await call('GET', `/api/v1/kb/${llmKb}/model/en-use-lite-2024`, llmReader)).body).toMatchObject({ model_type: 'semantic' });
    expect((await call('GET', `/api/v1/kb/${llmKb}/model/no-such-model`, llmReader)).status).toBe(404);
  });

  it('serves understanding-API keys with the built-in models at /api/v1/predict', async () => {
    const tokens = await call<{ tokens: { ner: string }[] }>(
      'GET',
      `/api/v1/predict/tokens?text=${encodeURIComponent('Write to ada@example.com')}`,
      ua,
    );
    expect(tokens.status).toBe(200);
    expect(tokens.body.tokens.map((t) => t.ner)).toContain('EMAIL');
    const sentence = await call<{ data: number[] }>('GET', '/api/v1/predict/sentence?text=hello', ua);
    expect(sentence.status).toBe(200);
    expect(sentence.body.data.length).toBeGreaterThan(100);
    const models = await call<{ data: { id: string }[] }>('GET', '/api/v1/predict/compat/models', ua);
    expect(models.body.data.map((m) => m.id)).toEqual(['extractive', 'en-use-lite-2024']);
    const rerank = await call<{ context_scores: Record<string, number> }>('POST', '/api/v1/predict/rerank', ua, {
      question: 'tides',
      context: { a: 'tides', b: 'bread' },
    });
    expect(rerank.body.context_scores['a']).toBeGreaterThan(rerank.body.context_scores['b'] as number);
  });

  it.each([
    ['an unknown endpoint', 'GET', 'predict/summarize?text=x', undefined, ['path', 'endpoint']],
    ['an unknown POST endpoint', 'POST', 'predict/sentence', { text: 'x' }, ['path', 'endpoint']],
    ['no text', 'GET', 'predict/sentence', undefined, ['query', 'text']],
    ['a text over 20 000 characters', 'POST', 'predict/query', { text: 'a'.repeat(20_001) }, ['body', 'text']],
    ['101 sentences', 'POST', 'predict/sentences', { texts: Array.from({ length: 101 }, () => 'x') }, ['body', 'texts']],
    ['max_tokens over 4096', 'POST', 'predict/chat', { question: 'q', max_tokens: 5000 }, ['body', 'max_tokens']],
    [
      '201 context pieces',
      'POST',
      'predict/chat',
      { question: 'q', query_context: Array.from({ length: 201 }, () => 'x') },
      ['body', 'query_context'],
    ],
    [
      'a chat history author that is not USER or NUCLIA',
      'POST',
      'predict/chat',
      { question: 'q', chat_history: [{ author: 'SYSTEM', text: 'x' }] },
      ['body', 'chat_history', 0, 'author'],
    ],
    ['rerank context that is a list', 'POST', 'predict/rerank', { question: 'q', context: ['a'] }, ['body', 'context']],
    ['remi with nothing', 'POST', 'predict/remi', { user_id: 'u' }, ['body']],
    [
      '51 resources to summarize',
      'POST',
      'predict/summarize',
      { resources: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`r${i}`, { fields: { f: 'x' } }])) },
      ['body', 'resources'],
    ],
    ['an unknown semantic model', 'GET', 'predict/sentence?text=x&model=nope', undefined, ['query', 'model']],
    [
      'a compat chat ending with an assistant message',
      'POST',
      'predict/compat/chat/completions',
      { messages: [{ role: 'assistant', content: 'hi' }] },
      ['body', 'messages'],
    ],
    [
      'a compat chat with n = 2',
      'POST',
      'predict/compat/chat/completions',
      { n: 2, messages: [{ role: 'user', content: 'hi' }] },
      ['body', 'n'],
    ],
    ['101 inputs to embed', 'POST', 'predict/compat/embeddings', { input: Array.from({ length: 101 }, () => 'x') }, ['body', 'input']],
  ])('refuses %s with a 422 naming the member', async (_name, method, path, body, loc) => {
    const res = await call<{ detail: { loc: unknown[] }[] }>(method, `/api/v1/kb/${kb}/${path}`, reader, body);
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d) => d.loc)).toContainEqual(loc);
  });

  it("refuses callers without access: none 401, a KB outside the user's accounts 404, another KB's key, a UA key on a KB route and a KB key on the UA routes 403", async () => {
    expect((await call('GET', `/api/v1/kb/${kb}/predict/tokens?text=x`, null)).status).toBe(401);
    expect((await call('GET', '/api/v1/kb/00000000-0000-4000-8000-000000000000/predict/tokens?text=x', pat)).status).toBe(404);
    expect((await call('GET', `/api/v1/kb/${kb}/predict/tokens?text=x`, llmReader)).status).toBe(403);
    expect(
      (await call('POST', `/api/v1/kb/${llmKb}/predict/compat/chat/completions`, reader, { messages: [{ role: 'user', content: 'hi' }] }))
        .status,
    ).toBe(403);
    expect((await call('GET', `/api/v1/kb/${kb}/predict/compat/models`, ua)).status).toBe(403);
    expect((await call('GET', '/api/v1/predict/tokens?text=x', reader)).status).toBe(403);
    expect(llm.requests).toHaveLength(0);
  });
});
