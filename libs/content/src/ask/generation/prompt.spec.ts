import type { GenerationContext, GenerationRequest } from './generator';
import { DEFAULT_SYSTEM_PROMPT, buildPrompt, estimateTokens, fitContext, trimContext } from './prompt';
import { sentenceSpans } from './text';

const context: GenerationContext[] = [
  { key: 'r1/t/body/0-50', text: 'Dune was written by Frank Herbert. It appeared in 1965.' },
  { key: 'r2/t/body/0-40', text: 'Herbert was born in Tacoma.' },
];
const request = (over: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question: 'Who wrote Dune?',
  context,
  chatHistory: [],
  citations: 'default',
  ...over,
});

describe('buildPrompt', () => {
  it('numbers the context in rank order under the default instructions', () => {
    const history = [{ author: 'USER' as const, text: 'Hi' }];
    const prompt = buildPrompt(request({ chatHistory: history }));
    expect(prompt.system).toContain(DEFAULT_SYSTEM_PROMPT);
    expect(prompt.system).toContain('plain text');
    expect(prompt.user).toBe(
      'Context passages:\n\n[1] Dune was written by Frank Herbert. It appeared in 1965.\n\n[2] Herbert was born in Tacoma.\n\nQuestion: Who wrote Dune?',
    );
    expect(prompt.history).toEqual(history);
    expect(prompt.footnotes).toEqual({});
  });

  it('substitutes {context}, {question} and {chat_history} in one pass, leaving other braces alone', () => {
    const prompt = buildPrompt(
      request({
        question: 'What does {context} mean in {json}?',
        systemPrompt: 'System. History:\n{chat_history}',
        userPrompt: 'Q={question}\nC={context}',
        chatHistory: [
          { author: 'USER', text: 'Hello' },
          { author: 'NUCLIA', text: 'Hi there' },
        ],
      }),
    );
    expect(prompt.system.startsWith('System. History:\nUser: Hello\nAssistant: Hi there')).toBe(true);
    expect(prompt.user).toBe(
      'Q=What does {context} mean in {json}?\nC=[1] Dune was written by Frank Herbert. It appeared in 1965.\n\n[2] Herbert was born in Tacoma.',
    );
    // The template placed the history itself: it is not sent a second time as messages.
    expect(prompt.history).toEqual([]);
  });

  it('adds the context and the question when the templates leave them out', () => {
    const prompt = buildPrompt(request({ userPrompt: 'Answer like a pirate.' }));
    expect(prompt.user).toBe(
      'Context passages:\n\n[1] Dune was written by Frank Herbert. It appeared in 1965.\n\n[2] Herbert was born in Tacoma.\n\nAnswer like a pirate.\n\nQuestion: Who wrote Dune?',
    );
  });

  it('keeps the context out of the user message when a custom system prompt holds it', () => {
    const prompt = buildPrompt(request({ systemPrompt: 'Use these: {context}' }));
    expect(prompt.user).toBe('Question: Who wrote Dune?');
    expect(prompt.system).toContain('Use these: [1] Dune');
  });

  it('asks for footnotes and maps each footnote to its context key with llm_footnotes', () => {
    const prompt = buildPrompt(request({ citations: 'llm_footnotes', preferMarkdown: true }));
    expect(prompt.footnotes).toEqual({ '1': 'r1/t/body/0-50', '2': 'r2/t/body/0-40' });
    expect(prompt.system).toContain('[1]');
    expect(prompt.system).toContain('Markdown');
  });
});

describe('trimContext', () => {
  const long: GenerationContext[] = [
    { key: 'a', text: 'First passage sentence one. First passage sentence two.' },
    { key: 'b', text: 'Second passage has a sentence. And another one here. And a third, longer sentence to cut.' },
    { key: 'c', text: 'Third passage.' },
  ];
  const total = long.reduce((sum, c) => sum + estimateTokens(c.text), 0);

  it('keeps everything that fits', () => {
    expect(trimContext(long, total)).toEqual(long);
  });

  it('never cuts mid-sentence, keeps rank order and stays within budget, for every budget', () => {
    for (let budget = 0; budget <= total; budget++) {
      const kept = trimContext(long, budget);
      expect(kept.reduce((sum, c) => sum + estimateTokens(c.text), 0)).toBeLessThanOrEqual(budget);
      kept.forEach((item, i) => {
        const original = long[i] as GenerationContext;
        expect(item.key).toBe(original.key);
        if (i < kept.length - 1) expect(item.text).toBe(original.text);
        // The last item is whole or ends exactly where one of its sentences ends.
        const ends = sentenceSpans(original.text).map((s) => s.end);
        expect(original.text.startsWith(item.text)).toBe(true);
        expect(ends).toContain(item.text.length);
      });
    }
  });

  it('cuts the passage that overflows after its last whole sentence and drops the rest', () => {
    const budget =
      estimateTokens((long[0] as GenerationContext).text) + estimateTokens('Second passage has a sentence. And another one here.');
    expect(trimContext(long, budget)).toEqual([long[0], { key: 'b', text: 'Second passage has a sentence. And another one here.' }]);
  });
});

describe('fitContext', () => {
  it('leaves the request alone without a limit and trims the context to a small one', () => {
    const req = request({
      context: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, text: 'A sentence of filler words here. '.repeat(20) })),
    });
    expect(fitContext(req, undefined)).toBe(req);
    const fitted = fitContext(req, 2_000);
    expect(fitted.context.length).toBeGreaterThan(0);
    expect(fitted.context.length).toBeLessThan(50);
    expect(estimateTokens(buildPrompt(fitted).user)).toBeLessThan(2_000);
  });
});
