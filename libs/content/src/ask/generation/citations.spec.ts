import { computeCitations, footnoteCitations, groundedness, stripFootnotes, supportScore } from './citations';
import type { GenerationContext } from './generator';

const context: GenerationContext[] = [
  { key: 'r1/t/body/0-80', text: 'Dune is a 1965 science fiction novel by Frank Herbert. It won the Hugo Award.' },
  { key: 'r2/t/body/0-70', text: 'Frank Herbert was born in Tacoma, Washington, in 1920.' },
  { key: 'r3/a/title/0-10', text: 'Gardening for beginners: tomatoes need sun.' },
];

describe('computeCitations', () => {
  it('cites, for each answer sentence, the paragraph supporting it, as spans of the answer', () => {
    const answer = 'Dune is a science fiction novel by Frank Herbert. Herbert was born in Tacoma in 1920.';
    const citations = computeCitations(answer, context);
    expect(citations).toEqual({ 'r1/t/body/0-80': [[0, 49]], 'r2/t/body/0-70': [[50, 85]] });
    expect(answer.slice(50, 85)).toBe('Herbert was born in Tacoma in 1920.');
  });

  it('does not cite a sentence no paragraph supports', () => {
    const answer = 'Dune won the Hugo Award. The moon is made of cheese and jazz trumpets.';
    expect(computeCitations(answer, context)).toEqual({ 'r1/t/body/0-80': [[0, 24]] });
  });

  it('merges adjacent sentences citing one paragraph', () => {
    const answer = 'Dune is a novel by Frank Herbert. It won the Hugo Award.';
    expect(computeCitations(answer, context)).toEqual({ 'r1/t/body/0-80': [[0, answer.length]] });
  });

  it('honours the threshold', () => {
    const answer = 'Herbert lived in Tacoma with gardens and oceans.';
    expect(Object.keys(computeCitations(answer, context, 0.2))).toEqual(['r2/t/body/0-70']);
    expect(computeCitations(answer, context, 0.9)).toEqual({});
  });

  it('only ever cites keys of the context, whatever the answer', () => {
    const keys = new Set(context.map((c) => c.key));
    const words = 'Dune Frank Herbert Tacoma 1920 novel Hugo tomatoes sun r9/t/body/0-1 [4] beginners cheese the of a'.split(' ');
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 200; i++) {
      const answer = Array.from(
        { length: 3 },
        () => Array.from({ length: 1 + Math.floor(random() * 8) }, () => words[Math.floor(random() * words.length)]).join(' ') + '.',
      ).join(' ');
      const citations = computeCitations(answer, context, random());
      for (const [key, spans] of Object.entries(citations)) {
        expect(keys.has(key)).toBe(true);
        for (const [start, end] of spans) expect(0 <= start && start < end && end <= answer.length).toBe(true);
      }
    }
    expect(computeCitations('Dune is a novel.', [])).toEqual({});
  });

  it('ignores footnote markers when aligning', () => {
    expect(Object.keys(computeCitations('Frank Herbert was born in Tacoma [2].', context))).toEqual(['r2/t/body/0-70']);
  });
});

describe('footnoteCitations', () => {
  it('returns the footnotes the answer uses that the prompt offered', () => {
    const footnotes = { '1': 'r1/t/body/0-80', '2': 'r2/t/body/0-70', '3': 'r3/a/title/0-10' };
    const answer = 'Dune is by Herbert [1]. He was born in Tacoma [^2][1, 7]. Unknown [9].';
    expect(footnoteCitations(answer, footnotes)).toEqual({ '1': 'r1/t/body/0-80', '2': 'r2/t/body/0-70' });
    expect(footnoteCitations('No markers.', footnotes)).toEqual({});
    expect(footnoteCitations('Sneaky [toString] [__proto__].', footnotes)).toEqual({});
  });

  it('strips markers for display', () => {
    expect(stripFootnotes('Dune is by Herbert [1]. Born in Tacoma [^2][3].')).toBe('Dune is by Herbert. Born in Tacoma.');
  });
});

describe('groundedness', () => {
  it('is the share of answer sentences some paragraph supports', () => {
    expect(groundedness('Frank Herbert was born in Tacoma, Washington, in 1920. It won the Hugo Award.', context)).toBe(1);
    expect(groundedness('Frank Herbert was born in Tacoma. Bananas are purple submarines orbiting Mars.', context)).toBe(0.5);
    expect(groundedness('', context)).toBe(1);
  });

  it('scores a verbatim quote 1 and an unrelated sentence 0', () => {
    expect(supportScore('It won the Hugo Award.', 'Dune is a novel. It won the Hugo Award.')).toBe(1);
    expect(supportScore('Bananas orbit Mars.', 'Dune is a novel.')).toBe(0);
  });
});
