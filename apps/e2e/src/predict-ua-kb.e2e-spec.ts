import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { apiKey, bearer, type Credential } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Chunk = { chunk: { type: string; text?: string; code?: string } };

/**
 * The reference's `/{kbid}` variants of the understanding-API predict routes (API-MAP 1.5,
 * docs/predict.md): an understanding-API key calls the predict API for a KB of its own account, on
 * that KB's models; another account's KB is as unknown to it as a missing one (404).
 */
describe('predict API /{kbid} variants for understanding-API keys (standalone)', () => {
  let topology: Topology;
  let llm: FakeLlmServer;
  let pat: NonNullable<Credential>;
  let ua: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let kb: string;
  let llmKb: string;
  let foreignKb: string;

  const call = <T = unknown>(method: string, path: string, credential: Credential, body?: unknown) =>
    topology.http.call<T>(method, path, { credential, body });

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    topology = await startStandalone();
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    kb = boot.kb.id;
    const createKb = async (account: string, slug: string, learning_configuration: Record<string, unknown> = {}) => {
      const res = await call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${account}/kbs`, pat, {
        slug,
        title: slug,
        learning_configuration,
      });
      expect(res.status).toBe(201);
      return (res.body.uuid ?? res.body.id) as string;
    };
    llmKb = await createKb(boot.account.id, 'ua-kb-llm', {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: llm.openAiUrl, key: 'sk-ua', timeout_ms: 5000 } },
    });
    const other = await call<{ id: string }>('POST', '/api/v1/accounts', pat, { slug: `ua-other-${Date.now()}`, title: 'Other' });
    expect(other.status).toBe(201);
    foreignKb = await createKb(other.body.id, 'ua-kb-foreign');
    const client = await call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, pat, {
      contact: 'ua-kb@example.com',
    });
    ua = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };
    const sa = await call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kb}/service_accounts`, pat, {
      title: 'reader',
      role: 'SMEMBER',
    });
    const key = await call<{ token: string }>(
      'POST',
      `/api/v1/account/${boot.account.id}/kb/${kb}/service_account/${sa.body.id}/keys`,
      pat,
      {
        expires: new Date(Date.now() + 86_400_000).toISOString(),
      },
    );
    reader = apiKey(key.body.token);
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
  }, 60_000);
  beforeEach(() => llm.reset());

  it("runs on the named KB's models: its generative model answers chat and compat chat, its semantic model embeds", async () => {
    const models = await call<{ data: { id: string }[] }>('GET', `/api/v1/predict/compat/models/${llmKb}`, ua);
    expect(models.status).toBe(200);
    expect(models.body.data.map((m) => m.id)).toContain('chatgpt-4o-mini');
    // The account-level route still answers with the built-in models (it is not taken for an `{endpoint}/{kbid}`).
    const builtIn = await call<{ data: { id: string }[] }>('GET', '/api/v1/predict/compat/models', ua);
    expect(builtIn.status).toBe(200);
    expect(builtIn.body.data.map((m) => m.id)).toEqual(['extractive', 'en-use-lite-2024']);

    llm.enqueue({ chunks: ['The tide ', 'turns.'] }, { chunks: ['Hello from the KB model.'] });
    const chat = await fetch(`${topology.http.baseUrl}/api/v1/predict/chat/${llmKb}`, {
      method: 'POST',
      headers: { [ua.header]: ua.value, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ question: 'What happens?', query_context: ['Tides turn twice a day.'] }),
    });
    expect(chat.status).toBe(200);
    const chunks = (await chat.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as Chunk).chunk);
    expect(
      chunks
        .filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join(''),
    ).toBe('The tide turns.');
    expect(chunks.at(-1)).toMatchObject({ type: 'status', code: '0' });
    const completion = await call<{ choices: { message: { content: string } }[] }>(
      'POST',
      `/api/v1/predict/compat/chat/completions/${llmKb}`,
      ua,
      { messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(completion.status).toBe(200);
    expect(completion.body.choices[0]?.message.content).toBe('Hello from the KB model.');
    expect(llm.requests).toHaveLength(2);

    const sentence = await call<{ data: number[] }>('GET', `/api/v1/predict/sentence/${kb}?text=hello`, ua);
    expect(sentence.status).toBe(200);
    const embedded = await call<{ data: { embedding: number[] }[] }>('POST', `/api/v1/predict/compat/embeddings/${kb}`, ua, {
      input: 'hello',
    });
    expect(embedded.status).toBe(200);
    expect(embedded.body.data[0]?.embedding).toEqual(sentence.body.data);
    const rerank = await call<{ context_scores: Record<string, number> }>('POST', `/api/v1/predict/rerank/${kb}`, ua, {
      question: 'tides',
      context: { a: 'tides', b: 'bread' },
    });
    expect(rerank.body.context_scores['a']).toBeGreaterThan(rerank.body.context_scores['b'] as number);
  });

  it("refuses another account's KB and an unknown one (404), a malformed id (422), other credentials (403) and none (401)", async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', 'predict/tokens/{kb}?text=x'],
      ['POST', 'predict/chat/{kb}', { question: 'q' }],
      ['POST', 'predict/compat/chat/completions/{kb}', { messages: [{ role: 'user', content: 'hi' }] }],
      ['POST', 'predict/compat/embeddings/{kb}', { input: 'x' }],
      ['GET', 'predict/compat/models/{kb}'],
    ];
    const statuses = async (id: string, credential: Credential) =>
      Promise.all(routes.map(async ([m, p, body]) => (await call(m, `/api/v1/${p.replace('{kb}', id)}`, credential, body)).status));
    expect(await statuses(foreignKb, ua)).toEqual([404, 404, 404, 404, 404]);
    expect(await statuses('00000000-0000-4000-8000-000000000000', ua)).toEqual([404, 404, 404, 404, 404]);
    expect(await statuses('not-a-kb', ua)).toEqual([422, 422, 422, 422, 422]);
    expect(await statuses(kb, reader)).toEqual([403, 403, 403, 403, 403]);
    expect(await statuses(kb, pat)).toEqual([403, 403, 403, 403, 403]);
    expect(await statuses(kb, null)).toEqual([401, 401, 401, 401, 401]);
    const badEndpoint = await call<{ detail: { loc: unknown[] }[] }>('GET', `/api/v1/predict/summarize/${kb}?text=x`, ua);
    expect(badEndpoint.status).toBe(422);
    expect(badEndpoint.body.detail.map((d) => d.loc)).toContainEqual(['path', 'endpoint']);
    expect(llm.requests).toHaveLength(0);
  });
});
