import { computeCitations, groundedness } from './citations';
import { ExtractiveGenerator, selectSentences, selfContained } from './extractive.generator';
import { GenerationError, collectAnswer, type GenerationContext, type GenerationEvent, type GenerationRequest } from './generator';
import { splitSentences } from './text';

const jaws: GenerationContext[] = [
  {
    key: 'jaws/t/body/0-200',
    text: 'Jaws is a 1975 American thriller film directed by Steven Spielberg. It is based on the 1974 novel by Peter Benchley. The film stars Roy Scheider.',
  },
  {
    key: 'spielberg/t/body/0-150',
    text: 'Steven Spielberg (born December 18, 1946) is an American film director. He lives in Pacific Palisades, California.',
  },
  { key: 'shark/t/body/0-90', text: 'The great white shark is a large species of shark. It lives in coastal waters.' },
];

const photosynthesis: GenerationContext[] = [
  { key: 'p1', text: 'Photosynthesis converts light energy into chemical energy in plants. It happens in chloroplasts.' },
  {
    key: 'p2',
    text: 'Photosynthesis converts light energy into chemical energy in plants. Chlorophyll absorbs light for photosynthesis in chloroplasts.',
  },
  { key: 'p3', text: 'Plants release oxygen as a by-product of photosynthesis.' },
];
const explain = 'Explain how photosynthesis in plants uses light energy and releases oxygen';

const request = (question: string, context: GenerationContext[] = jaws, over: Partial<GenerationRequest> = {}): GenerationRequest => ({
  question,
  context,
  chatHistory: [],
  citations: 'default',
  ...over,
});

const sentencesOf = (context: GenerationContext[]): Set<string> => new Set(context.flatMap((c) => splitSentences(c.text)));

describe('ExtractiveGenerator', () => {
  const generator = new ExtractiveGenerator();

  it('answers a factoid question with the single best sentence, verbatim', async () => {
    const { answer, metadata } = await collectAnswer(generator.generate(request('Who directed the film Jaws?')));
    expect(answer).toBe('Jaws is a 1975 American thriller film directed by Steven Spielberg.');
    expect(metadata).toMatchObject({
      type: 'metadata',
      stopReason: 'stop',
      outputTokens: expect.any(Number),
      inputTokens: expect.any(Number),
    });
  });

  it('follows a multi-hop question to the sentence about the bridging entity', async () => {
    const { answer } = await collectAnswer(generator.generate(request('Where does the director of Jaws live?')));
    // The sentence opens with a pronoun: it comes with the sentence that says who "he" is.
    expect(answer).toBe(
      'Steven Spielberg (born December 18, 1946) is an American film director. He lives in Pacific Palisades, California.',
    );
  });

  it('gives a sentence that opens with a pronoun together with the sentence before it, verbatim and cited', async () => {
    const nile: GenerationContext[] = [
      {
        key: 'nile/t/body/0-120',
        text: 'The Nile is the longest river in Africa. It flows north through Egypt and ends in the Mediterranean Sea.',
      },
      { key: 'sahara/t/body/0-60', text: 'The Sahara is a desert in North Africa.' },
    ];
    const { answer } = await collectAnswer(generator.generate(request('Which river flows through Egypt?', nile)));
    expect(answer).toBe(nile[0]?.text);
    expect(computeCitations(answer, nile)).toEqual({ 'nile/t/body/0-120': [[0, answer.length]] });
    // Not when the sentence before is in the answer already, nor for a passage's first sentence.
    const first = selectSentences('Which river flows through Egypt?', [{ key: 'k', text: 'It flows north through Egypt.' }]);
    expect(selfContained(first, [{ key: 'k', text: 'It flows north through Egypt.' }]).map((p) => p.text)).toEqual([
      'It flows north through Egypt.',
    ]);
    const both = selectSentences('Nile river Africa flows north through Egypt', nile, { maxSentences: 3, followRatio: 0 });
    const texts = selfContained(both, nile).map((p) => p.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        'The Nile is the longest river in Africa.',
        'It flows north through Egypt and ends in the Mediterranean Sea.',
      ]),
    );
  });

  it('prefers the better-ranked passage when two match equally', () => {
    const context = [
      { key: 'a', text: 'The river Alpha flows north.' },
      { key: 'b', text: 'The river Alpha flows north!' },
    ];
    expect(selectSentences('Where does the river Alpha flow?', context).map((s) => s.key)).toEqual(['a']);
  });

  it('answers an open question with several sentences, one text event each, without repeats', async () => {
    const context = photosynthesis;
    const events: GenerationEvent[] = [];
    for await (const e of generator.generate(request(explain, context))) events.push(e);
    const texts = events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text);
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.length).toBeLessThanOrEqual(3);
    const sentences = texts.map((t) => t.trim());
    expect(new Set(sentences).size).toBe(sentences.length);
    for (const s of sentences) expect(sentencesOf(context).has(s)).toBe(true);
  });

  it('adds further sentences only within maxAnswerTokens, but never cuts the best one', async () => {
    const { answer: full } = await collectAnswer(generator.generate(request(explain, photosynthesis)));
    expect(splitSentences(full).length).toBeGreaterThan(1);
    const { answer: short } = await collectAnswer(generator.generate(request(explain, photosynthesis, { maxAnswerTokens: 3 })));
    expect(splitSentences(short)).toEqual([splitSentences(full)[0]]);
  });

  it('composes every answer only of verbatim context sentences (groundedness 1)', async () => {
    const questions = [
      'Who directed the film Jaws?',
      'When was Steven Spielberg born?',
      'What novel is Jaws based on?',
      'Describe sharks.',
      'Tell me about California and film',
      'completely unrelated words like quantum chromodynamics',
      'Which actor stars in the film?',
    ];
    for (const question of questions) {
      const { answer } = await collectAnswer(generator.generate(request(question)));
      expect(answer).not.toBe('');
      for (const sentence of splitSentences(answer)) expect(sentencesOf(jaws).has(sentence)).toBe(true);
      expect(groundedness(answer, jaws)).toBe(1);
    }
  });

  it('falls back to the opening sentence of the best-ranked passage when nothing overlaps', async () => {
    const { answer } = await collectAnswer(generator.generate(request('quantum chromodynamics?')));
    expect(answer).toBe('Jaws is a 1975 American thriller film directed by Steven Spielberg.');
  });

  it('answers nothing without context', async () => {
    const events: GenerationEvent[] = [];
    for await (const e of generator.generate(request('Who directed Jaws?', []))) events.push(e);
    expect(events).toEqual([{ type: 'metadata', inputTokens: expect.any(Number), outputTokens: 0, stopReason: 'stop' }]);
  });

  it('uses the last user turn to understand a follow-up question', () => {
    const history = [{ author: 'USER' as const, text: 'Tell me about the great white shark.' }];
    const [best] = selectSentences('Where does it live?', jaws, { chatHistory: history });
    expect(best?.text).toBe('It lives in coastal waters.');
  });

  it('stops with an aborted error when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      collectAnswer(generator.generate(request('Who directed Jaws?', jaws, { signal: controller.signal }))),
    ).rejects.toMatchObject({ kind: 'aborted' });
    await expect(
      collectAnswer(generator.generate(request('Who directed Jaws?', jaws, { signal: controller.signal }))),
    ).rejects.toBeInstanceOf(GenerationError);
  });
});
