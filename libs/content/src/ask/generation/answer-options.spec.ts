import { OutboundHttp } from '@kb/platform/net';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { AnthropicGenerator } from './anthropic.generator';
import { ExtractiveGenerator } from './extractive.generator';
import { collectAnswer, type GenerationEvent, type GenerationRequest, type Generator } from './generator';
import { OpenAiCompatibleGenerator } from './openai-compatible.generator';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

const SCHEMA = {
  name: 'verdict',
  description: 'The verdict',
  schema: { type: 'object', properties: { author: { type: 'string' }, year: { type: 'integer' } }, required: ['author'] },
};
const request = (over: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question: 'Who wrote Dune?',
  context: [{ key: 'r1/t/body/0-34', text: 'Dune was written by Frank Herbert.' }],
  chatHistory: [],
  citations: 'none',
  ...over,
});

async function events(it: AsyncIterable<GenerationEvent>): Promise<GenerationEvent[]> {
  const out: GenerationEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Structured answers and reasoning, through the providers' real protocols (the fake server speaks both). */
describe('answer options on the provider generators', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => (llm = await startFakeLlmServer()));
  afterAll(() => llm.close());
  beforeEach(() => llm.reset());

  const openai = () => new OpenAiCompatibleGenerator({ url: llm.openAiUrl, key: 'sk', model: 'gpt-test', timeoutMs: 2_000, http: local });
  const anthropic = () =>
    new AnthropicGenerator({ url: llm.url, key: 'sk-ant', model: 'claude-test', timeoutMs: 2_000, http: local, temperature: 0.2 });

  it('OpenAI-compatible: sends response_format json_schema and reasoning_effort, streams the content as json events', async () => {
    llm.enqueue({ chunks: ['{"author": ', '"Frank Herbert"}'], reasoning: ['The passage ', 'names him.'] });
    const got = await events(openai().generate(request({ answerJsonSchema: SCHEMA, reasoning: { effort: 'high' } })));
    const body = llm.requests[0]?.body as Record<string, unknown>;
    expect(body['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'verdict', description: 'The verdict', schema: SCHEMA.schema },
    });
    expect(body['reasoning_effort']).toBe('high');
    expect(
      got
        .filter((e) => e.type === 'reasoning')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('The passage names him.');
    expect(got.some((e) => e.type === 'text')).toBe(false);
    expect(
      JSON.parse(
        got
          .filter((e) => e.type === 'json')
          .map((e) => (e as { text: string }).text)
          .join(''),
      ),
    ).toEqual({ author: 'Frank Herbert' });
  });

  it('OpenAI-compatible: sends neither member when the request asks for neither', async () => {
    await collectAnswer(openai().generate(request()));
    const body = llm.requests[0]?.body as Record<string, unknown>;
    expect(body['response_format']).toBeUndefined();
    expect(body['reasoning_effort']).toBeUndefined();
  });

  it('OpenAI-compatible: reads reasoning_content and the JSON content of a whole (non-streamed) answer', async () => {
    llm.enqueue({ chunks: ['{"author": "Frank Herbert"}'], reasoning: ['thought'], ignoreStream: true });
    const got = await collectAnswer(openai().generate(request({ answerJsonSchema: SCHEMA })));
    expect(got).toMatchObject({ answer: '', reasoning: 'thought', json: '{"author": "Frank Herbert"}' });
  });

  it('Anthropic: a forced answer tool carries the schema; its input_json_delta chunks are the json events', async () => {
    llm.enqueue({ chunks: ['{"author":', ' "Frank Herbert", "year": 1965}'] });
    const got = await collectAnswer(anthropic().generate(request({ answerJsonSchema: SCHEMA })));
    const body = llm.requests[0]?.body as Record<string, unknown>;
    expect(body['tools']).toEqual([{ name: 'verdict', description: 'The verdict', input_schema: SCHEMA.schema }]);
    expect(body['tool_choice']).toEqual({ type: 'tool', name: 'verdict' });
    expect(body['thinking']).toBeUndefined();
    expect(body['temperature']).toBe(0.2);
    expect(got.answer).toBe('');
    expect(JSON.parse(got.json)).toEqual({ author: 'Frank Herbert', year: 1965 });
    expect(got.metadata?.stopReason).toBe('tool_use');
  });

  it('Anthropic: thinking with a budget on top of the answer tokens, thinking blocks as reasoning, the tool left to the model', async () => {
    llm.enqueue({ chunks: ['{"author": "Frank Herbert"}'], reasoning: ['Herbert ', 'wrote it.'] });
    const got = await collectAnswer(
      anthropic().generate(request({ answerJsonSchema: SCHEMA, reasoning: { budgetTokens: 2048 }, maxAnswerTokens: 500 })),
    );
    const body = llm.requests[0]?.body as Record<string, unknown>;
    expect(body['thinking']).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body['max_tokens']).toBe(2548);
    expect(body['tool_choice']).toEqual({ type: 'auto' });
    expect(body['temperature']).toBeUndefined();
    expect(got.reasoning).toBe('Herbert wrote it.');
    expect(JSON.parse(got.json)).toEqual({ author: 'Frank Herbert' });
  });

  it('Anthropic: effort picks the budget; effort none asks for no thinking', async () => {
    await collectAnswer(anthropic().generate(request({ reasoning: { effort: 'low' } })));
    await collectAnswer(anthropic().generate(request({ reasoning: { effort: 'none' } })));
    expect((llm.requests[0]?.body as Record<string, unknown>)['thinking']).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect((llm.requests[1]?.body as Record<string, unknown>)['thinking']).toBeUndefined();
  });

  it('Anthropic: reads thinking and tool_use blocks of a whole (non-streamed) message', async () => {
    llm.enqueue({ chunks: ['{"author": "Frank Herbert"}'], reasoning: ['thought'], ignoreStream: true });
    const got = await collectAnswer(anthropic().generate(request({ answerJsonSchema: SCHEMA })));
    expect(got).toMatchObject({ answer: '', reasoning: 'thought' });
    expect(JSON.parse(got.json)).toEqual({ author: 'Frank Herbert' });
  });

  it('says which generators can answer following a schema', () => {
    expect(openai().structuredAnswers).toBe(true);
    expect(anthropic().structuredAnswers).toBe(true);
    expect((new ExtractiveGenerator() as Generator).structuredAnswers).toBeFalsy();
  });
});
