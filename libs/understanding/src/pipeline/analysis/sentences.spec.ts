import { splitSentences } from '../split';
import { sentenceSpans } from './sentences';

const texts = (text: string, spans: { start: number; end: number }[]): string[] => spans.map((s) => text.slice(s.start, s.end));

describe('sentenceSpans', () => {
  it.each([
    [
      'abbreviations and initials',
      'Dr. Smith works for the U.S. government. He arrived at 5 p.m. yesterday. Did he stay?',
      ['Dr. Smith works for the U.S. government.', 'He arrived at 5 p.m. yesterday.', 'Did he stay?'],
    ],
    ['quotes', 'He said: "Go home." Then he left!', ['He said: "Go home."', 'Then he left!']],
    ['a heading line', 'Introduction\nThe system works well. It is fast.', ['Introduction', 'The system works well.', 'It is fast.']],
    ['a hard-wrapped line', 'A sentence that wraps\nin the middle. Next one.', ['A sentence that wraps\nin the middle.', 'Next one.']],
    ['list items', 'Items:\n- first item\n- second item', ['Items:', '- first item', '- second item']],
    ['astral characters before', '😀😀 Emoji first. Then café au lait.', ['😀😀 Emoji first.', 'Then café au lait.']],
  ])('splits English: %s', (_name, text, expected) => {
    expect(texts(text, sentenceSpans(text, 0, text.length, 'en'))).toEqual(expected);
  });

  it('keeps offsets exact inside a larger text', () => {
    const text = 'Intro paragraph.\n\n  Mr. Brown met Ms. Green. They talked.  \n\nOutro.';
    const start = text.indexOf('Mr.');
    const end = text.indexOf('Outro') - 2;
    const spans = sentenceSpans(text, start, end, 'en');
    expect(texts(text, spans)).toEqual(['Mr. Brown met Ms. Green.', 'They talked.']);
    expect(spans.every((s) => s.start >= start && s.end <= end)).toBe(true);
  });

  it.each([
    ['es', 'El Sr. García llegó. ¿Vino solo? Sí.'],
    ['ja', '今日は晴れです。明日は雨でしょう。'],
    [undefined, 'No language known. Still split.'],
  ])('uses the regex splitter for %s', (language, text) => {
    expect(sentenceSpans(text, 0, text.length, language)).toEqual(splitSentences(text, 0, text.length));
  });

  it('returns nothing for blank ranges', () => {
    expect(sentenceSpans('   \n  ', 0, 6, 'en')).toEqual([]);
  });
});
