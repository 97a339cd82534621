/**
 * Character-level normalisation shared by every analyser. NFKC runs on one word at a time (never
 * on the whole text, where it would shift offsets) so the tokenizer can report positions in the
 * original string.
 */

/** Soft hyphens (PDF line breaks), zero-width joiners, variation selectors, enclosing keycaps. */
// (Alternations, not one character class: ESLint's no-misleading-character-class objects to
// joiners and combining marks side by side in a class.)
const IGNORABLE = /\u00ad|[\u200c-\u200d]|[\ufe00-\ufe0f]|[\u20dd-\u20e4]|[\u{e0100}-\u{e01ef}]/gu;

const ARABIC_SCRIPT = /[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff]/;
/** Tashkeel (harakat, shadda, sukun, superscript alef...) and tatweel. */
const ARABIC_MARKS = /[\u0610-\u061a]|\u0640|[\u064b-\u065f]|\u0670|[\u06d6-\u06ed]/g;
/** Alef with hamza above/below, madda, wasla → bare alef. */
const ARABIC_ALEFS = /[\u0622\u0623\u0625\u0671-\u0673]/g;
/** Alef maksura and Persian yeh → yeh; keheh → kaf (text typed on Persian keyboards). */
const ARABIC_LETTERS: Readonly<Record<string, string>> = { '\u0649': '\u064a', '\u06cc': '\u064a', '\u06a9': '\u0643' };
const ARABIC_LETTER = /[\u0649\u06cc\u06a9]/g;
const ARABIC_DIGIT = /[\u0660-\u0669\u06f0-\u06f9]/g;

/**
 * Arabic orthographic normalisation (as Lucene's ArabicNormalizer, but teh marbuta is kept: the
 * Snowball stemmer strips "ة" as a suffix and mis-stems "المدرسه" if it is rewritten to "ه").
 */
export function normalizeArabic(word: string): string {
  return word
    .replace(ARABIC_MARKS, '')
    .replace(ARABIC_ALEFS, '\u0627')
    .replace(ARABIC_LETTER, (c) => ARABIC_LETTERS[c] ?? c)
    .replace(ARABIC_DIGIT, (c) => String.fromCharCode(0x30 + (c.charCodeAt(0) & 0xf)));
}

/**
 * NFKC + lowercase + removal of invisible characters; Arabic-script words get the Arabic
 * normalisation whatever the paragraph's language, Cyrillic "ё" becomes "е" (Snowball's Russian
 * stemmer does not know "ё"), typographic apostrophes become "'".
 */
export function normalizeWord(raw: string): string {
  if (isAscii(raw)) return raw.toLowerCase();
  let word = raw.normalize('NFKC').toLowerCase().replace(IGNORABLE, '');
  if (word.includes('\u2019')) word = word.replace(/\u2019/g, "'");
  if (ARABIC_SCRIPT.test(word)) word = normalizeArabic(word);
  if (word.includes('ё')) word = word.replace(/ё/g, 'е');
  return word;
}

const LATIN_OR_GREEK = /[\p{Script=Latin}\p{Script=Greek}]/u;
const COMBINING_DIACRITICS = /[\u0300-\u036f]/g;
/** Letters that carry their diacritic in the base character (no NFD decomposition). */
const FOLDED_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ŀ: 'l',
  ς: 'σ',
};
const FOLDED_LETTER = /[ßæœøłđðþıħŧŀς]/g;

/**
 * Strips diacritics from Latin and Greek words ("café" → "cafe", "ά" → "α"); other scripts are
 * left alone (their combining marks are vowels, not accents). Runs after stemming.
 */
export function foldDiacritics(term: string): string {
  if (isAscii(term) || !LATIN_OR_GREEK.test(term)) return term;
  return term
    .normalize('NFD')
    .replace(COMBINING_DIACRITICS, '')
    .replace(FOLDED_LETTER, (c) => FOLDED_LETTERS[c] ?? c)
    .normalize('NFC');
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
