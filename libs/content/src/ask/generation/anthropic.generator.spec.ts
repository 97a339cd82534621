import { OutboundHttp } from '@kb/platform/net';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { AnthropicGenerator, alternatingMessages, type AnthropicGeneratorOptions } from './anthropic.generator';
import { GenerationError, collectAnswer, type GenerationEvent, type GenerationRequest } from './generator';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

const request = (over: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question: 'Who wrote Dune?',
  context: [{ key: 'r1/t/body/0-34', text: 'Dune was written by Frank Herbert.' }],
  chatHistory: [],
  citations: 'default',
  ...over,
});

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

describe('AnthropicGenerator', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => (llm = await startFakeLlmServer()));
  afterAll(() => llm.close());
  beforeEach(() => llm.reset());

  const make = (options: Partial<AnthropicGeneratorOptions> = {}): AnthropicGenerator =>
    new AnthropicGenerator({ url: llm.url, key: 'sk-ant-test', model: 'claude-test', timeoutMs: 2_000, http: local, ...options });

  it('streams text deltas in order and reports usage from message_start and message_delta', async () => {
    llm.enqueue({ chunks: ['Frank', ' Herbert.'], usage: { input: 321, output: 4 } });
    const events: GenerationEvent[] = [];
    for await (const e of make().generate(request())) events.push(e);
    expect(events).toEqual([
      { type: 'text', text: 'Frank' },
      { type: 'text', text: ' Herbert.' },
      { type: 'metadata', inputTokens: 321, outputTokens: 4, stopReason: 'end_turn' },
    ]);
  });

  it('sends images as base64 image blocks after the text of the last user message', async () => {
    await collectAnswer(
      make().generate(
        request({
          images,
          chatHistory: [
            { author: 'USER', text: 'Earlier?' },
            { author: 'NUCLIA', text: 'Yes.' },
          ],
        }),
      ),
    );
    const messages = llm.requests[0]?.body['messages'] as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]?.content).toBe('Earlier?');
    const last = messages[2]?.content as { type: string }[];
    expect(last[0]).toEqual({ type: 'text', text: expect.stringContaining('Question:') });
    expect(last.slice(1)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
    ]);
    expect(llm.requests[0]?.images.map((i) => i.mediaType)).toEqual(['image/png', 'image/jpeg']);
  });

  it('sends the Messages request: headers, top-level system, max_tokens, stream', async () => {
    const history = [
      { author: 'NUCLIA' as const, text: 'Hello, ask me anything.' },
      { author: 'USER' as const, text: 'Tell me about Dune.' },
      { author: 'NUCLIA' as const, text: 'Dune is a novel.' },
    ];
    await collectAnswer(make().generate(request({ chatHistory: history, systemPrompt: 'Be terse. Context: {context}' })));
    const [received] = llm.requests;
    expect(received?.path).toBe('/v1/messages');
    expect(received?.headers['x-api-key']).toBe('sk-ant-test');
    expect(received?.headers['anthropic-version']).toBe('2023-06-01');
    expect(received?.body).toMatchObject({ model: 'claude-test', max_tokens: 1024, stream: true });
    expect(received?.body['system']).toContain('Be terse. Context: [1] Dune was written by Frank Herbert.');
    const messages = received?.body['messages'] as { role: string; content: string }[];
    // Leading assistant turn dropped: the Messages API wants the user first.
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[2]?.content).toContain('Who wrote Dune?');
    expect(messages[2]?.content).not.toContain('[1] Dune');
  });

  it('accepts a base url that already ends in /v1', async () => {
    await collectAnswer(make({ url: `${llm.url}/v1/` }).generate(request({ maxAnswerTokens: 50 })));
    expect(llm.requests[0]?.path).toBe('/v1/messages');
    expect(llm.requests[0]?.body['max_tokens']).toBe(50);
  });

  it('emits thinking as reasoning', async () => {
    llm.enqueue({ reasoning: ['Let me think.'], chunks: ['Frank Herbert.'] });
    const { answer, reasoning } = await collectAnswer(make().generate(request()));
    expect([answer, reasoning]).toEqual(['Frank Herbert.', 'Let me think.']);
  });

  it('parses fragmented CRLF streams', async () => {
    llm.enqueue({ chunks: ['Éire ', 'and ', 'Ελλάδα'], fragmentBytes: 9, lineEnding: '\r\n' });
    expect((await collectAnswer(make().generate(request()))).answer).toBe('Éire and Ελλάδα');
  });

  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [400, 'bad_request'],
    [413, 'bad_request'],
    [429, 'rate_limited'],
    [529, 'rate_limited'],
    [500, 'provider'],
  ] as const)('maps HTTP %i to %s', async (status, kind) => {
    llm.enqueue({ status, errorMessage: 'anthropic says no', retryAfter: status === 429 ? '3' : undefined });
    const { error } = await failure(make().generate(request()));
    expect([error.kind, error.status]).toEqual([kind, status]);
    expect(error.message).toContain(`answered HTTP ${status}`);
    expect(error.message).not.toContain('anthropic says no');
    if (status === 429) expect(error.retryAfter).toBe(3);
  });

  it.each([
    ['overloaded_error', 'rate_limited'],
    ['api_error', 'provider'],
  ] as const)('maps an %s event in the stream to %s', async (type, kind) => {
    llm.enqueue({ chunks: ['Frank', ' Herbert'], midStreamError: { afterChunks: 1, type } });
    const { error, before } = await failure(make().generate(request()));
    expect([error.kind, before]).toEqual([kind, [{ type: 'text', text: 'Frank' }]]);
  });

  it('times out on silence before and during the stream', async () => {
    llm.enqueue({ hang: 'before-headers' }, { chunks: ['a', 'b'], hang: { afterChunks: 1 } });
    const started = Date.now();
    expect((await failure(make({ timeoutMs: 120 }).generate(request()))).error.kind).toBe('timeout');
    expect((await failure(make({ timeoutMs: 120 }).generate(request()))).error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reads a whole message from a proxy that does not stream', async () => {
    llm.enqueue({ chunks: ['Frank ', 'Herbert.'], usage: { input: 10, output: 3 }, ignoreStream: true });
    const { answer, metadata } = await collectAnswer(make().generate(request()));
    expect([answer, metadata]).toEqual(['Frank Herbert.', { type: 'metadata', inputTokens: 10, outputTokens: 3, stopReason: 'end_turn' }]);
  });

  it('treats a stream without message_stop as failed', async () => {
    llm.enqueue({ omitEnd: true });
    const { error, before } = await failure(make().generate(request()));
    expect(error.kind).toBe('provider');
    expect(before.filter((e) => e.type === 'metadata')).toEqual([]);
  });
});

describe('alternatingMessages', () => {
  it('merges consecutive turns of one author and ends with the user prompt', () => {
    expect(
      alternatingMessages(
        [
          { author: 'USER', text: 'a' },
          { author: 'USER', text: 'b' },
          { author: 'NUCLIA', text: 'c' },
          { author: 'USER', text: 'd' },
        ],
        'prompt',
      ),
    ).toEqual([
      { role: 'user', content: 'a\n\nb' },
      { role: 'assistant', content: 'c' },
      { role: 'user', content: 'd\n\nprompt' },
    ]);
  });
});
