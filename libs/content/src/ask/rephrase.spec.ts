import { OutboundHttp } from '@kb/platform/net';
import { startFakeLlmServer } from '@kb/platform/testing';
import { ExtractiveGenerator, OpenAiCompatibleGenerator } from './generation';
import { cleanRephrased, rephraseByRules, rephraseQuery, resolveQuestion, salientPhrase } from './rephrase';

const USER = 'USER' as const;
const NUCLIA = 'NUCLIA' as const;

describe('rephrasing by rules (no model)', () => {
  it('finds the salient noun phrase of a question', () => {
    expect(salientPhrase('What is the capital of France?')).toBe('capital of France');
    expect(salientPhrase('Who painted the Mona Lisa?')).toBe('Mona Lisa');
    expect(salientPhrase('What is it?')).toBeUndefined();
  });

  it("replaces the first pronoun with the previous question's phrase, a possessive with its possessive", () => {
    expect(resolveQuestion('When was it stolen?', 'Who painted the Mona Lisa?')).toBe('When was Mona Lisa stolen?');
    expect(resolveQuestion('What is its population?', 'What is the capital of France?')).toBe("What is capital of France's population?");
    expect(resolveQuestion('Is this book long?', 'Who wrote Dune?')).toBe('Is this book long?');
  });

  it('completes a follow-up ("and X?", "what about X?") from the previous question', () => {
    expect(resolveQuestion('And Germany?', 'What is the capital of France?')).toBe('What is the capital of Germany?');
    expect(resolveQuestion('what about neap tides', 'How high are spring tides?')).toBe('How high are neap tides?');
  });

  it('keeps a standalone question, and any question without history', () => {
    expect(resolveQuestion('Why does bread rise?', 'What causes tides?')).toBe('Why does bread rise?');
    expect(rephraseByRules('When was it stolen?', [])).toBe('When was it stolen?');
  });

  it("resolves along the user's turns in order, ignoring the answers", () => {
    const history = [
      { author: USER, text: 'What is the capital of France?' },
      { author: NUCLIA, text: 'Paris is the capital of France.' },
      { author: USER, text: 'And Germany?' },
      { author: NUCLIA, text: 'Berlin.' },
    ];
    expect(rephraseByRules('How many people live in it?', history)).toBe('How many people live in capital of Germany?');
  });

  it('cleans a model reply into one query line', () => {
    expect(cleanRephrased('\n  "When was the Mona Lisa stolen?"\nBecause…')).toBe('When was the Mona Lisa stolen?');
    expect(cleanRephrased('Standalone search query: tides moon')).toBe('tides moon');
  });
});

describe('rephraseQuery', () => {
  const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
  afterAll(() => local.close());

  it('uses the rules with the extractive generator', async () => {
    await expect(
      rephraseQuery(new ExtractiveGenerator(), {
        question: 'When was it stolen?',
        history: [{ author: USER, text: 'Who painted the Mona Lisa?' }],
      }),
    ).resolves.toEqual({ query: 'When was Mona Lisa stolen?', by: 'rules' });
  });

  it("asks a provider with the history and the caller's prompt, and falls back to the rules on an empty reply", async () => {
    const llm = await startFakeLlmServer();
    try {
      const g = new OpenAiCompatibleGenerator({ url: llm.openAiUrl, model: 'gpt-test', timeoutMs: 2_000, http: local });
      llm.enqueue({ chunks: ['"When was the Mona', ' Lisa stolen?"'] }, { chunks: ['  '] });
      const history = [{ author: USER, text: 'Who painted the Mona Lisa?' }];
      await expect(
        rephraseQuery(g, { question: 'When was it stolen?', history, prompt: 'Make it standalone: {question}' }),
      ).resolves.toEqual({ query: 'When was the Mona Lisa stolen?', by: 'model' });
      const messages = (llm.requests[0]?.body as { messages: { role: string; content: string }[] }).messages;
      expect(messages.at(-1)?.content).toContain('Make it standalone: When was it stolen?');
      expect(messages.some((m) => m.role === 'user' && m.content === 'Who painted the Mona Lisa?')).toBe(true);
      await expect(rephraseQuery(g, { question: 'When was it stolen?', history })).resolves.toEqual({
        query: 'When was Mona Lisa stolen?',
        by: 'rules',
      });
      expect((llm.requests[1]?.body as { messages: { content: string }[] }).messages.at(-1)?.content).toContain(
        'Who painted the Mona Lisa?',
      );
    } finally {
      await llm.close();
    }
  });
});
