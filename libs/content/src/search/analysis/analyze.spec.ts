import { analyze, analyzeQuery } from './index';

/** True when a query and a passage share at least one term. */
const matches = (query: string, passage: string, language: string): boolean => {
  const terms = new Set(analyze(passage, language));
  return analyzeQuery(query, [language]).some((term) => terms.has(term));
};

describe('analyze', () => {
  it.each([
    ['English stemming', 'studies study running run', 'en', ['studi', 'studi', 'run', 'run']],
    ['stop words', 'The cat and the hat are on it', 'en', ['cat', 'hat']],
    ['possessives', "John's dog’s bone, the dogs' bones", 'en', ['john', 'dog', 'bone', 'dog', 'bone']],
    ['English contractions stay whole', "don't", 'en', ["don't"]],
    ['hyphenated words are split', 'state-of-the-art', 'en', ['state', 'art']],
    ['numbers are terms', 'p53 in 2019 covid-19 3.14 1,000', 'en', ['p53', '2019', 'covid', '19', '3.14', '1,000']],
    ['NFKC and lowercase', 'ﬁnance ＡＢＣ Ⅻ', 'en', ['financ', 'abc', 'xii']],
    ['soft hyphens and keycaps', 'infor\u00admation 1\ufe0f\u20e3', 'en', ['inform', '1']],
    ['Unicode letters and marks', 'Ärger Øresund ΟΔΟΣ', undefined, ['arger', 'oresund', 'οδοσ']],
    ['unknown language: folded, not stemmed', 'The Cafés of naïve studies', undefined, ['cafes', 'naive', 'studies']],
    ['Spanish accents', 'Las canciones del corazón, una canción y una cancion', 'es', ['cancion', 'corazon', 'cancion', 'cancion']],
    ['French elision and accents', "L'hôpital et l'hopital du café", 'fr', ['hopital', 'hopital', 'caf']],
    ['Italian elision', "dell'università", 'it', ['univers']],
    ['German stemming then folding', 'Häuser und Straße', 'de', ['haus', 'strass']],
    ['Russian ё', 'ёлка елка', 'ru', ['елк', 'елк']],
    ['CJK bigrams whatever the language', '東京都に住む', 'en', ['東京', '京都', '都に', 'に住', '住む']],
    ['a lone CJK character', '中 文', 'zh', ['中', '文']],
    ['Hangul bigrams', '한국어', 'ko', ['한국', '국어']],
    ['CJK inside a Latin word', 'iPhone用户', 'zh', ['iphone', '用户']],
    ['half-width katakana with a voiced mark', 'ｶﾞｽ', 'ja', ['ガス']],
    ['Arabic digits', '٢٠١٩', 'ar', ['2019']],
  ])('%s', (_name, text, language, expected) => {
    expect(analyze(text, language)).toEqual(expected);
  });

  it('drops words longer than 40 characters', () => {
    expect(analyze(`${'x'.repeat(41)} ${'k'.repeat(40)} ok`, 'en')).toEqual(['k'.repeat(40), 'ok']);
  });

  it('segments Thai with the ICU dictionary', () => {
    const terms = analyze('สวัสดีครับ', 'th');
    expect(terms.length).toBeGreaterThan(1);
    expect(terms.join('')).toBe('สวัสดีครับ');
  });

  it.each([['en'], ['EN'], ['en-GB'], ['en_US'], ['english']])('reads %s as English', (code) => {
    expect(analyze('running studies', code)).toEqual(['run', 'studi']);
  });

  it.each([[undefined], [''], ['xx'], ['zh'], ['constructor']])('reads %s as unknown: no stemming', (code) => {
    expect(analyze('running studies', code)).toEqual(['running', 'studies']);
  });

  it('keeps stemming after the stem cache overflows', () => {
    for (let i = 0; i < 60_000; i++) analyze(`word${String.fromCharCode(97 + (i % 26))}${i.toString(36).replace(/[0-9]/g, 'q')}`, 'en');
    expect(analyze('studies running', 'en')).toEqual(['studi', 'run']);
  });
});

describe('Arabic', () => {
  it('normalises diacritics, tatweel, alef forms and alef maksura before stemming', () => {
    expect(analyze('كَتَبَ الكتـــاب الإسلام مستشفى', 'ar')).toEqual(analyze('كتب الكتاب الاسلام مستشفي', 'ar'));
  });

  it('removes stop words, also with a conjunction attached', () => {
    expect(analyze('ما هى الأبراج وهو', 'ar')).toEqual(['ابراج']);
  });

  it.each([
    ['كتاب', 'والكتاب'],
    ['الكتاب', 'بالكتاب'],
    ['كتابه', 'الكتاب'],
    ['مكتبة', 'المكتبات'],
    ['المدرسة', 'مدارسنا والمدرسة'],
    ['طالبة', 'الطالبات'],
    ['الجامعة', 'والجامعة'],
    ['الإسلام', 'اسلام'],
    ['المستشفى', 'مستشفي'],
    ['يكتبون', 'سيكتبون'],
    ['ما أهمية مكة المكرمة؟', 'تكمن أهميّة مكّة في أنها'],
  ])('query %s finds a passage with %s', (query, passage) => {
    expect(matches(query, passage, 'ar')).toBe(true);
  });

  it('does not match unrelated words', () => {
    expect(matches('مدرسة', 'سيارة جميلة', 'ar')).toBe(false);
  });
});

describe('analyzeQuery', () => {
  it('is the union of every language and the neutral analysis, without duplicates', () => {
    const terms = analyzeQuery('The studies of running cells, cells', ['en', 'es', 'fr']);
    expect(new Set(terms).size).toBe(terms.length);
    const union = new Set([
      ...analyze('studies running cells', 'en'),
      ...analyze('studies running cells', 'es'),
      ...analyze('studies running cells', 'fr'),
      ...analyze('studies running cells'),
    ]);
    expect(new Set(terms)).toEqual(union);
    expect(terms).toEqual(expect.arrayContaining(['studi', 'run', 'cell', 'studies', 'running', 'cells']));
  });

  it('lists terms in order of first appearance, languages first', () => {
    expect(analyzeQuery('cell cells cell running', ['en'])).toEqual(['cell', 'run', 'cells', 'running']);
  });

  it('analyses with the neutral analyser alone when the knowledge box has no language', () => {
    expect(analyzeQuery('Running Cafés', [])).toEqual(['running', 'cafes']);
  });

  it('drops a word that is a stop word in any of the languages', () => {
    expect(analyzeQuery('the casa', ['es'])).toEqual(['cas', 'casa']);
    expect(analyzeQuery('les maisons', ['en', 'fr'])).toEqual(['maison', 'maisons']);
    expect(analyzeQuery('les maisons', ['en'])).toEqual(['les', 'maison', 'maisons']);
    expect(analyzeQuery('und Häuser', ['en', 'de'])).toEqual(['hauser', 'haus']);
  });

  it('drops one- and two-letter stop words only in their own language', () => {
    expect(analyzeQuery('IL-6 in the CI', ['en', 'fr', 'it'])).toEqual(['il', '6', 'ci']);
    expect(analyzeQuery('il y a', ['fr'])).toEqual(['il', 'y']);
    expect(analyzeQuery('il y a', [])).toEqual(['il', 'y']);
    expect(analyze('il y a', 'fr')).toEqual([]);
  });

  it('deduplicates languages that share an analyser', () => {
    expect(analyzeQuery('bøker', ['no', 'nb', 'nn'])).toEqual(['bok', 'boker']);
  });

  it('finds inflected forms in a passage of the same language', () => {
    expect(matches('study of runners', 'They studied how he runs', 'en')).toBe(true);
    expect(matches('canción', 'Las canciones populares', 'es')).toBe(true);
  });
});
