import { scoreRemi, scoreRemiRaw } from './remi-scorer';
import { contentWords, sentences, stem } from './remi-text';

const CONTEXT = [
  {
    key: 'a',
    text: 'Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer. He lives in Los Angeles, California.',
  },
  { key: 'b', text: 'Ed Wood was an American filmmaker, actor, writer, producer, and director.' },
  { key: 'c', text: 'The 1957 Indianapolis 500 was held at the Indianapolis Motor Speedway on Thursday, May 30, 1957.' },
];
const QUESTION = 'Were Scott Derrickson and Ed Wood of the same nationality?';

describe('offline REMi scorer', () => {
  it('finds content words, names and numbers', () => {
    expect(contentWords('The films of Scott were made in 1966.')).toEqual([
      { stem: 'film', salient: false },
      { stem: 'scott', salient: true },
      { stem: 'made', salient: false },
      { stem: '1966', salient: true },
    ]);
    expect(stem("Derrickson's")).toBe('derrickson');
    expect(sentences('Yes. Both are American.\nThe end', 10)).toEqual(['Yes.', 'Both are American.', 'The end']);
    expect(sentences('a. b. c.', 2)).toEqual(['a.', 'b.']);
  });

  it('grounds supported sentences and not wrong or unsupported ones', async () => {
    const right = await scoreRemi({
      question: QUESTION,
      answer: 'Yes. Scott Derrickson is an American director. Ed Wood was an American filmmaker.',
      context: CONTEXT,
    });
    expect(right.groundedness).toEqual([5, 5, 5]);
    const swapped = await scoreRemi({
      question: QUESTION,
      answer: 'Scott Derrickson is a Canadian director born in 1971.',
      context: CONTEXT,
    });
    expect(swapped.groundedness[0]).toBeLessThanOrEqual(1);
    const unsupported = await scoreRemi({ question: QUESTION, answer: 'Both were born in Paris and trained as chefs.', context: CONTEXT });
    expect(unsupported.groundedness[0]).toBeLessThanOrEqual(1);
  });

  it('rates the context pieces about the question above the others, and the answer by the question', async () => {
    const s = await scoreRemi({ question: QUESTION, answer: 'Scott Derrickson and Ed Wood were both American.', context: CONTEXT });
    expect(s.context_relevance[0]).toBeGreaterThan(s.context_relevance[2] as number);
    expect(s.context_relevance[1]).toBeGreaterThan(s.context_relevance[2] as number);
    expect(s.context_relevance[2]).toBe(0);
    const off = await scoreRemi({ question: QUESTION, answer: 'The race was held in May.', context: CONTEXT });
    expect(s.answer_relevance.score).toBeGreaterThan(off.answer_relevance.score);
    expect(s.answer_relevance.reason).toContain('key terms');
    const none = await scoreRemi({ question: QUESTION, answer: 'Not enough data to answer this.', context: [], noContext: true });
    expect(none).toEqual({
      answer_relevance: { score: 0, reason: expect.stringContaining('No context') },
      context_relevance: [],
      groundedness: [],
    });
  });

  it('mixes in the model cosine when vectors come, and does without them when the call fails', async () => {
    // Vectors that make every text identical: the semantic part is then at its top.
    const same = await scoreRemiRaw({ question: QUESTION, answer: 'Both were born in Paris.', context: CONTEXT }, async (texts) =>
      texts.map(() => [1, 0]),
    );
    const lexical = await scoreRemiRaw({ question: QUESTION, answer: 'Both were born in Paris.', context: CONTEXT });
    expect(same.groundedness[0]).toBeGreaterThan(lexical.groundedness[0] as number);
    const failed = await scoreRemiRaw({ question: QUESTION, answer: 'Both were born in Paris.', context: CONTEXT }, async () =>
      Promise.reject(new Error('down')),
    );
    expect(failed).toEqual(lexical);
  });

  it('bounds its work: at most 50 context pieces and 50 sentences', async () => {
    const many = await scoreRemi({
      question: QUESTION,
      answer: 'Ed Wood. '.repeat(200),
      context: Array.from({ length: 80 }, (_, i) => ({ key: String(i), text: 'Ed Wood' })),
    });
    expect(many.context_relevance).toHaveLength(50);
    expect(many.groundedness).toHaveLength(50);
  });
});
