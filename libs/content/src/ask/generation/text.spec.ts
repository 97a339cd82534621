import { contentTerms, estimateTokens, sentenceSpans, splitSentences, stem } from './text';

describe('splitSentences', () => {
  it.each([
    ['plain punctuation', 'It rained. Then it stopped! Did it? Yes.', ['It rained.', 'Then it stopped!', 'Did it?', 'Yes.']],
    [
      'abbreviations and initials',
      'Dr. Smith met J. R. R. Tolkien in the U.S. in 1950. They talked.',
      ['Dr. Smith met J. R. R. Tolkien in the U.S. in 1950.', 'They talked.'],
    ],
    [
      'decimals, times and e.g.',
      'Pi is 3.14 and e.g. the tea is at 4 p.m. daily. Fine.',
      ['Pi is 3.14 and e.g. the tea is at 4 p.m. daily.', 'Fine.'],
    ],
    [
      'closing quotes and brackets',
      'He said "stop." She left (quickly.) It ended.',
      ['He said "stop."', 'She left (quickly.)', 'It ended.'],
    ],
    ['a lower-case next word does not start a sentence', 'See fig. three for details.', ['See fig. three for details.']],
    [
      'line breaks: headings and lists split, wrapped lines do not',
      'Title\nThe text is hard\nwrapped here.\n\n- item one\n- item two',
      ['Title', 'The text is hard\nwrapped here.', '- item one', '- item two'],
    ],
    ['CJK full stops', '東京は日本の首都です。大阪は大きい。', ['東京は日本の首都です。', '大阪は大きい。']],
    ['surrounding space', '   One.   Two.  ', ['One.', 'Two.']],
    ['no terminal punctuation', 'no punctuation at all', ['no punctuation at all']],
  ])('%s', (_, text, expected) => {
    expect(splitSentences(text)).toEqual(expected);
  });

  it('returns spans that slice the original text', () => {
    const text = 'Alpha beta.  Gamma delta?\nEpsilon.';
    for (const span of sentenceSpans(text)) expect(text.slice(span.start, span.end)).toMatch(/^\S.*\S$/s);
    expect(sentenceSpans('')).toEqual([]);
  });
});

describe('contentTerms and stem', () => {
  it('drops stop words, lower-cases, removes accents and stems', () => {
    expect(contentTerms("The Directors of Émile's films were directing")).toEqual(['direct', 'emil', 'film', 'direct']);
  });

  it.each([
    ['films', 'film'],
    ['cities', 'city'],
    ['directed', 'direct'],
    ['running', 'run'],
    ['1990s', '1990s'],
  ])('stems %s to %s', (word, expected) => {
    expect(stem(word)).toBe(expected);
  });
});

describe('estimateTokens', () => {
  it('counts about four characters a token, one per CJK character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('東京')).toBe(2);
    expect(estimateTokens('x'.repeat(400))).toBe(100);
  });
});
