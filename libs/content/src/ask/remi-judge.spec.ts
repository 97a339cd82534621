import { AccountsSubjects, type RemiJudgeRequest } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { configureOutbound } from '@kb/platform/net';
import { createLogger } from '@kb/platform/observability';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { JUDGE_SCHEMA, judgeTask, parseJudgement } from './remi-judge';
import { RemiJudgeService } from './remi-judge.service';

const SECRET = 'sk-judge-secret-0123456789';
const REQUEST: RemiJudgeRequest = {
  kbid: 'kb-1',
  question: 'What does a storm bring?',
  sentences: ['A storm brings rain and wind.', 'It was built in 1931.'],
  context: [
    { key: 'r1/t/body/0-50', text: 'A storm brings rain, wind and thunder over the sea.' },
    { key: 'r2/t/body/0-40', text: 'Cats sleep most of the day.' },
  ],
};
const GOOD = JSON.stringify({
  answer_relevance: { score: 5, reason: 'It says what a storm brings.' },
  context_relevance: [5, 0],
  groundedness: [5, 0],
});

describe('the judge answer', () => {
  it('is read with code fences and text around it, scores rounded', () => {
    expect(parseJudgement(`Here you are:\n\`\`\`json\n${GOOD}\n\`\`\``, 2, 2)).toEqual({
      answer_relevance: { score: 5, reason: 'It says what a storm brings.' },
      context_relevance: [5, 0],
      groundedness: [5, 0],
    });
    expect(
      parseJudgement('{"answer_relevance": {"score": "4", "reason": " ok "}, "context_relevance": [4.0], "groundedness": []}', 1, 0),
    ).toEqual({ answer_relevance: { score: 4, reason: 'ok' }, context_relevance: [4], groundedness: [] });
  });

  it.each([
    ['no JSON', 'The answer is good.'],
    ['a cut-off answer', GOOD.slice(0, 60)],
    ['a missing reason', '{"answer_relevance": {"score": 3}, "context_relevance": [1, 1], "groundedness": [1, 1]}'],
    ['one score too few', '{"answer_relevance": {"score": 3, "reason": "x"}, "context_relevance": [1], "groundedness": [1, 1]}'],
    ['one score too many', '{"answer_relevance": {"score": 3, "reason": "x"}, "context_relevance": [1, 1], "groundedness": [1, 1, 1]}'],
    ['a score out of range', '{"answer_relevance": {"score": 6, "reason": "x"}, "context_relevance": [1, 1], "groundedness": [1, 1]}'],
    ['a negative score', '{"answer_relevance": {"score": 3, "reason": "x"}, "context_relevance": [-1, 1], "groundedness": [1, 1]}'],
    ['a word for a score', '{"answer_relevance": {"score": 3, "reason": "x"}, "context_relevance": ["high", 1], "groundedness": [1, 1]}'],
    ['an array', '[1, 2]'],
  ])('is refused with %s', (_what, text) => {
    expect(parseJudgement(text, 2, 2)).toBeNull();
  });

  it('is asked for with the counts it must have, question and sentences as data', () => {
    const task = judgeTask(REQUEST);
    expect(task).toContain('exactly 2 integers, one per context passage');
    expect(task).toContain('(2) It was built in 1931.');
    expect(task).toContain('Question:\nWhat does a storm bring?');
  });
});

describe('RemiJudgeService against a fake provider', () => {
  let llm: FakeLlmServer;
  let lines: string[];
  let kbConfig: Record<string, unknown>;
  let service: RemiJudgeService;
  const configRequests: unknown[] = [];

  beforeAll(async () => {
    // As main.ts would from OUTBOUND_ALLOW_CIDRS: the fake provider is on loopback.
    configureOutbound({ policy: { allowCidrs: ['127.0.0.1'] } });
    llm = await startFakeLlmServer();
  });
  afterAll(async () => llm?.close());

  beforeEach(() => {
    llm.reset();
    lines = [];
    configRequests.length = 0;
    const bus = {
      request: async (def: { subject: string }, req: unknown) => {
        if (def.subject !== AccountsSubjects.resolveKbConfig.subject) throw new Error(`unexpected ${def.subject}`);
        configRequests.push(req);
        return kbConfig;
      },
    } as unknown as MessageBus;
    const logger = createLogger({ service: 'content', level: 'debug', destination: { write: (l: string) => void lines.push(l) } });
    service = new RemiJudgeService(bus, logger);
  });

  const openai = () => ({
    generative_model: 'chatgpt-4o-mini',
    user_keys: { openai: { url: llm.openAiUrl, key: SECRET, timeout_ms: 3000 } },
  });

  it("grades with the KB's OpenAI-compatible model, asking for the JSON schema", async () => {
    kbConfig = openai();
    llm.enqueue({ chunks: [GOOD.slice(0, 40), GOOD.slice(40)] });
    const res = await service.judge(REQUEST);
    expect(res).toEqual({
      outcome: 'judged',
      model: 'chatgpt-4o-mini',
      answer_relevance: { score: 5, reason: 'It says what a storm brings.' },
      context_relevance: [5, 0],
      groundedness: [5, 0],
    });
    expect(configRequests).toEqual([{ kb_id: 'kb-1' }]);
    const sent = llm.requests[0];
    expect(sent?.headers['authorization']).toBe(`Bearer ${SECRET}`);
    expect(sent?.body['response_format']).toMatchObject({ type: 'json_schema', json_schema: { name: JUDGE_SCHEMA.name } });
    const messages = JSON.stringify(sent?.body['messages']);
    expect(messages).toContain('[2] Cats sleep most of the day.');
    expect(messages).toContain('(1) A storm brings rain and wind.');
    expect(JSON.stringify(res)).not.toContain(SECRET);
  });

  it("grades with the KB's Anthropic model through a tool", async () => {
    kbConfig = { generative_model: 'claude-3-5-haiku-latest', user_keys: { anthropic: { url: llm.url, key: SECRET, timeout_ms: 3000 } } };
    llm.enqueue({ chunks: [GOOD] });
    const res = await service.judge(REQUEST);
    expect(res).toMatchObject({ outcome: 'judged', model: 'claude-3-5-haiku-latest', groundedness: [5, 0] });
    expect(llm.requests[0]?.headers['x-api-key']).toBe(SECRET);
    expect(llm.requests[0]?.body['tools']).toEqual([expect.objectContaining({ name: JUDGE_SCHEMA.name })]);
  });

  it('says so when the KB has no generative provider, without calling anything', async () => {
    kbConfig = { generative_model: 'extractive' };
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'no_provider' });
    kbConfig = {};
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'no_provider' });
    expect(llm.requests).toHaveLength(0);
  });

  it('reports a malformed answer, a provider error and an unusable configuration, never the key', async () => {
    kbConfig = openai();
    llm.enqueue({ chunks: ['{"answer_relevance": {"score": 4, "reason": "fine"}, "context_relevance": [4]'] });
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'failed', model: 'chatgpt-4o-mini', error: 'malformed' });
    llm.enqueue({ status: 500, errorMessage: `upstream broke while handling key ${SECRET}` });
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'failed', model: 'chatgpt-4o-mini', error: 'provider' });
    llm.enqueue({ status: 401, errorMessage: `Incorrect API key provided: ${SECRET}` });
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'failed', model: 'chatgpt-4o-mini', error: 'auth' });
    kbConfig = { generative_model: 'chatgpt-4o-mini', user_keys: { openai: { url: 'ftp://x', key: SECRET } } };
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'failed', model: null, error: 'config' });
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(lines.join('\n')).not.toContain('upstream broke');
  });

  it('reports a provider that does not answer in time', async () => {
    kbConfig = { generative_model: 'chatgpt-4o-mini', user_keys: { openai: { url: llm.openAiUrl, key: SECRET, timeout_ms: 200 } } };
    llm.enqueue({ hang: 'before-headers' });
    expect(await service.judge(REQUEST)).toEqual({ outcome: 'failed', model: 'chatgpt-4o-mini', error: 'timeout' });
  });

  it('reports the accounts service being unreachable', async () => {
    const bus = { request: async () => Promise.reject(new Error('no responders')) } as unknown as MessageBus;
    const quiet = createLogger({ service: 'content', level: 'silent' });
    expect(await new RemiJudgeService(bus, quiet).judge(REQUEST)).toEqual({ outcome: 'failed', model: null, error: 'unavailable' });
  });

  it('cuts many long context pieces to the judge bounds', async () => {
    kbConfig = openai();
    const context = Array.from({ length: 40 }, (_, i) => ({ key: `r${i}/t/body/0-2000`, text: `${'word '.repeat(400)}piece ${i}` }));
    const scores = JSON.stringify({
      answer_relevance: { score: 3, reason: 'ok' },
      context_relevance: Array.from({ length: 40 }, () => 1),
      groundedness: [1, 1],
    });
    llm.enqueue({ chunks: [scores] });
    const res = await service.judge({ ...REQUEST, context });
    expect(res).toMatchObject({ outcome: 'judged', context_relevance: Array.from({ length: 40 }, () => 1) });
    // 16,000 characters of context shared by 40 pieces: 400 each, the tails ("piece 7") cut off.
    const messages = JSON.stringify(llm.requests[0]?.body['messages']);
    expect(messages).not.toContain('piece 7');
    expect(messages.length).toBeLessThan(22_000);
  });
});
