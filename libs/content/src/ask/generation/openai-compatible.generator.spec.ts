import { OutboundHttp } from '@kb/platform/net';
import { createServer } from 'node:net';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { GenerationError, collectAnswer, type GenerationEvent, type GenerationRequest } from './generator';
import { OpenAiCompatibleGenerator, type OpenAiCompatibleGeneratorOptions } from './openai-compatible.generator';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

const request = (over: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question: 'Who wrote Dune?',
  context: [
    { key: 'r1/t/body/0-34', text: 'Dune was written by Frank Herbert.' },
    { key: 'r2/t/body/0-30', text: 'It was published in 1965.' },
  ],
  chatHistory: [],
  citations: 'default',
  ...over,
});

async function collect(events: AsyncIterable<GenerationEvent>): Promise<GenerationEvent[]> {
  const out: GenerationEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

/** Runs the stream to its failure; also returns what was yielded before it. */
async function failure(events: AsyncIterable<GenerationEvent>): Promise<{ error: GenerationError; before: GenerationEvent[] }> {
  const before: GenerationEvent[] = [];
  try {
    for await (const e of events) before.push(e);
  } catch (error) {
    expect(error).toBeInstanceOf(GenerationError);
    return { error: error as GenerationError, before };
  }
  throw new Error('the stream did not fail');
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
const images = [
  { mediaType: 'image/png', data: PNG, key: 'extra_context_images/0' },
  { mediaType: 'image/jpeg', data: '/9j/4AAQ', key: 'query_image' },
];

describe('OpenAiCompatibleGenerator', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => (llm = await startFakeLlmServer()));
  afterAll(() => llm.close());
  beforeEach(() => llm.reset());

  const make = (options: Partial<OpenAiCompatibleGeneratorOptions> = {}): OpenAiCompatibleGenerator =>
    new OpenAiCompatibleGenerator({ url: llm.openAiUrl, key: 'sk-test', model: 'gpt-test', timeoutMs: 2_000, http: local, ...options });

  it('streams the chunks in order, then the usage, from the request it should send', async () => {
    llm.enqueue({ chunks: ['Frank', ' Herbert', ' wrote it.'], usage: { input: 120, output: 5 } });
    const events = await collect(make({ headers: { 'openai-organization': 'org-1' } }).generate(request({ maxAnswerTokens: 64, seed: 7 })));
    expect(events).toEqual([
      { type: 'text', text: 'Frank' },
      { type: 'text', text: ' Herbert' },
      { type: 'text', text: ' wrote it.' },
      { type: 'metadata', inputTokens: 120, outputTokens: 5, stopReason: 'stop' },
    ]);
    const [received] = llm.requests;
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers['authorization']).toBe('Bearer sk-test');
    expect(received?.headers['openai-organization']).toBe('org-1');
    expect(received?.body).toMatchObject({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      seed: 7,
    });
    const messages = received?.body['messages'] as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[1]?.content).toContain('[1] Dune was written by Frank Herbert.');
    expect(messages[1]?.content).toContain('[2] It was published in 1965.');
    expect(messages[1]?.content).toContain('Question: Who wrote Dune?');
  });

  it('sends images as image_url data-URL parts after the text of the user message; without images the content stays a string', async () => {
    await collect(make().generate(request({ images })));
    const messages = llm.requests[0]?.body['messages'] as { role: string; content: unknown }[];
    const user = messages[messages.length - 1] as { role: string; content: { type: string; text?: string }[] };
    expect(user.role).toBe('user');
    expect(user.content[0]).toEqual({ type: 'text', text: expect.stringContaining('Frank Herbert') });
    expect(user.content.slice(1)).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
    ]);
    expect(llm.requests[0]?.images).toEqual([
      { mediaType: 'image/png', data: PNG },
      { mediaType: 'image/jpeg', data: '/9j/4AAQ' },
    ]);
    await collect(make().generate(request()));
    expect(typeof (llm.requests[1]?.body['messages'] as { content: unknown }[]).at(-1)?.content).toBe('string');
    expect(llm.requests[1]?.images).toEqual([]);
  });

  it('sends chat history as earlier user and assistant messages', async () => {
    const history = [
      { author: 'USER' as const, text: 'Tell me about Dune.' },
      { author: 'NUCLIA' as const, text: 'Dune is a novel.' },
    ];
    await collect(make().generate(request({ chatHistory: history })));
    const messages = llm.requests[0]?.body['messages'] as { role: string; content: string }[];
    expect(messages.map((m) => [m.role, m.content.slice(0, 19)])).toEqual([
      ['system', expect.any(String)],
      ['user', 'Tell me about Dune.'],
      ['assistant', 'Dune is a novel.'],
      ['user', expect.any(String)],
    ]);
  });

  it('speaks Azure: api-key header, api-version query, deployment address', async () => {
    const azure = make({ url: `${llm.url}/openai/deployments/gpt4o`, auth: 'api-key', apiVersion: '2024-10-21' });
    await collect(azure.generate(request()));
    expect(llm.requests[0]?.path).toBe('/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21');
    expect(llm.requests[0]?.headers['api-key']).toBe('sk-test');
    expect(llm.requests[0]?.headers['authorization']).toBeUndefined();
  });

  it('parses events split anywhere, CRLF line endings and multi-byte characters', async () => {
    const chunks = ['Zürich ', '東京 ', '🙂 done'];
    llm.enqueue({ chunks, fragmentBytes: 11, lineEnding: '\r\n' });
    const events = await collect(make().generate(request()));
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text)).toEqual(chunks);
  });

  it('emits reasoning separately from the answer', async () => {
    llm.enqueue({ reasoning: ['thinking…'], chunks: ['Answer.'] });
    const events = await collect(make().generate(request()));
    expect(events.slice(0, 2)).toEqual([
      { type: 'reasoning', text: 'thinking…' },
      { type: 'text', text: 'Answer.' },
    ]);
  });

  it('reads one JSON answer from a model configured without streaming', async () => {
    llm.enqueue({ chunks: ['Frank ', 'Herbert'], usage: { input: 9, output: 2 } });
    const events = await collect(make({ stream: false }).generate(request()));
    expect(llm.requests[0]?.body).toMatchObject({ stream: false });
    expect(llm.requests[0]?.body['stream_options']).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Frank Herbert' },
      { type: 'metadata', inputTokens: 9, outputTokens: 2, stopReason: 'stop' },
    ]);
  });

  it('reads one JSON answer from a server that ignored stream: true', async () => {
    llm.enqueue({ chunks: ['Frank ', 'Herbert'], usage: { input: 9, output: 2 }, ignoreStream: true });
    const { answer, metadata } = await collectAnswer(make().generate(request()));
    expect([answer, metadata?.outputTokens]).toEqual(['Frank Herbert', 2]);
  });

  it('does not ask for usage when told not to, and still reports the stop reason', async () => {
    llm.enqueue({ stopReason: 'length' });
    const events = await collect(make({ includeUsage: false }).generate(request()));
    expect(llm.requests[0]?.body['stream_options']).toBeUndefined();
    expect(events[events.length - 1]).toEqual({ type: 'metadata', inputTokens: undefined, outputTokens: undefined, stopReason: 'length' });
  });

  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [400, 'bad_request'],
    [404, 'bad_request'],
    [422, 'bad_request'],
    [500, 'provider'],
    [503, 'provider'],
  ] as const)('maps HTTP %i to %s, in our words and not the provider body', async (status, kind) => {
    llm.enqueue({ status, errorMessage: 'the provider says no' });
    const { error } = await failure(make().generate(request()));
    expect([error.kind, error.status, error.code]).toEqual([kind, status, 'GENERATION_FAILED']);
    expect(error.message).toMatch(new RegExp(`^generative provider 127\\.0\\.0\\.1:\\d+ answered HTTP ${status} \\(`));
    expect(error.message).not.toContain('the provider says no');
  });

  it('maps 429 to rate_limited with Retry-After in seconds', async () => {
    llm.enqueue({ status: 429, retryAfter: '7' });
    const { error } = await failure(make().generate(request()));
    expect([error.kind, error.retryAfter, error.details?.['retryable']]).toEqual(['rate_limited', 7, true]);
  });

  it('reports a refused connection as a provider error', async () => {
    const port = await closedPort();
    const { error } = await failure(make({ url: `http://127.0.0.1:${port}/v1` }).generate(request()));
    expect(error.kind).toBe('provider');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('times out when no response comes, without hanging', async () => {
    llm.enqueue({ hang: 'before-headers' });
    const started = Date.now();
    const { error } = await failure(make({ timeoutMs: 150 }).generate(request()));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('times out when the stream stalls after the first chunks', async () => {
    llm.enqueue({ chunks: ['Frank', ' Herbert'], hang: { afterChunks: 1 } });
    const { error, before } = await failure(make({ timeoutMs: 150 }).generate(request()));
    expect(error.kind).toBe('timeout');
    expect(before).toEqual([{ type: 'text', text: 'Frank' }]);
  });

  it('counts the timeout per chunk: a slow but steady stream completes', async () => {
    llm.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 60, firstChunkDelayMs: 60 });
    const events = await collect(make({ timeoutMs: 200 }).generate(request()));
    expect(events.filter((e) => e.type === 'text')).toHaveLength(5);
  });

  it('turns an error payload in the stream into a provider error, without its text', async () => {
    llm.enqueue({ chunks: ['Frank', ' Herbert'], midStreamError: { afterChunks: 1 }, errorMessage: 'model crashed' });
    const { error, before } = await failure(make().generate(request()));
    expect([error.kind, before]).toEqual(['provider', [{ type: 'text', text: 'Frank' }]]);
    expect(error.message).toContain('reported an error mid-stream');
    expect(error.message).not.toContain('model crashed');
  });

  it('reports a dropped connection and a stream cut before its end as provider errors', async () => {
    llm.enqueue({ chunks: ['a', 'b'], dropAfterChunks: 1 }, { chunks: ['a', 'b'], omitEnd: true });
    expect((await failure(make().generate(request()))).error.kind).toBe('provider');
    expect((await failure(make().generate(request()))).error.kind).toBe('provider');
  });

  it('stops promptly when the caller aborts, and when the consumer leaves early', async () => {
    llm.setDefault({ chunks: ['a', 'b', 'c'], hang: { afterChunks: 1 } });
    const controller = new AbortController();
    const run = failure(make({ timeoutMs: 5_000 }).generate(request({ signal: controller.signal })));
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    expect((await run).error.kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1_000);

    for await (const event of make({ timeoutMs: 5_000 }).generate(request())) {
      expect(event).toEqual({ type: 'text', text: 'a' });
      break;
    }
    expect(llm.requests).toHaveLength(2);
  });

  it('does not call the provider before the stream is read', async () => {
    make().generate(request());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(llm.requests).toHaveLength(0);
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
