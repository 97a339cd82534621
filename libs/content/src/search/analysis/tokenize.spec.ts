import { analyze, tokenize } from './index';

const TEXTS: [string, string | undefined][] = [
  ["John's 😀 state-of-the-art ﬁnance, l'été", 'en'],
  ['Café 👍🏽 déjà-vu: ﬁne ﬂows ½ infor\u00admation', 'fr'],
  ['𝐁𝐨𝐥𝐝 words 𠮷野家 東京都 ｶﾞｽ', undefined],
  ['كَتَبَ الطالبُ 😀 في المكتبة', 'ar'],
  ['İstanbul ΟΔΟΣ Straße', 'tr'],
];

describe('tokenize', () => {
  it('gives offsets into the original text, across surrogate pairs and NFKC changes', () => {
    const text = "😀 Café's ﬁne 𠮷野 ok";
    expect(tokenize(text, 'en')).toEqual([
      { start: 3, end: 7, term: 'cafe', word: 'café' },
      { start: 10, end: 13, term: 'fine', word: 'fine' },
      { start: 14, end: 17, term: '𠮷野', word: '𠮷野' },
      { start: 18, end: 20, term: 'ok', word: 'ok' },
    ]);
    expect(text.slice(10, 13)).toBe('ﬁne');
  });

  it.each(TEXTS)('spans of %j are the words themselves', (text, language) => {
    const tokens = tokenize(text, language);
    expect(tokens.length).toBeGreaterThan(2);
    for (const { start, end, word } of tokens) {
      const normalized = text
        .slice(start, end)
        .replace(/\u0130/g, 'i')
        .normalize('NFKC')
        .toLowerCase()
        .replace(/\u00ad|[\u064b-\u0652]/g, '');
      // "½" becomes the two words "1" and "2" of one span.
      expect(normalized.includes('⁄') ? normalized.split('⁄') : [normalized]).toContain(word);
    }
  });

  it.each(TEXTS)('terms of %j are those of analyze()', (text, language) => {
    expect(tokenize(text, language).map((token) => token.term)).toEqual(analyze(text, language));
  });

  it('keeps the word unstemmed and the term stemmed', () => {
    expect(tokenize('Running studies', 'en')).toEqual([
      { start: 0, end: 7, term: 'run', word: 'running' },
      { start: 8, end: 15, term: 'studi', word: 'studies' },
    ]);
  });

  it('shares one span among the pieces NFKC makes of a word', () => {
    expect(tokenize('½', 'en')).toEqual([
      { start: 0, end: 1, term: '1', word: '1' },
      { start: 0, end: 1, term: '2', word: '2' },
    ]);
  });

  it('leaves out the elided article and the possessive', () => {
    const text = "l'hôpital's";
    const [token] = tokenize(text, 'fr');
    expect(text.slice(token!.start, token!.end)).toBe('hôpital');
  });
});
