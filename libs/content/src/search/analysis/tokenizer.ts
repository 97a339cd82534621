import type { LanguageAnalyzer } from './language-analyzers';
import { isAscii, normalizeWord } from './normalize';

/** Receives each term with the [start, end) span of its word in the original text. */
export type TermSink = (term: string, start: number, end: number, word: string) => void;

/** Longer words are base64, hashes, URLs without separators: noise that only bloats the index. */
export const MAX_WORD_LENGTH = 40;

// Letters, digits and combining marks; soft hyphens and zero-width (non-)joiners are kept inside a
// word (and removed by normalizeWord) so that "infor\u00admation" stays one word.
const WORD = '[\\p{L}\\p{N}][\\p{L}\\p{N}\\p{M}\\u00ad\\u200c\\u200d]*';
// Apostrophes join letters ("don't", "l'homme"); "." and "," join digits ("3.14", "1,000"), as in
// Unicode word segmentation. Hyphens, slashes and everything else separate words.
const JOINER = "(?:['\\u2019]|(?<=\\p{Nd})[.,](?=\\p{Nd}))";
const TOKEN = new RegExp(`${WORD}(?:${JOINER}${WORD})*`, 'gu');
/** What normalizeWord may leave in a word; anything else (NFKC turned "½" into "1⁄2") splits it. */
const NORMALIZED_WORD = /^[\p{L}\p{N}\p{M}'.,]*$/u;

// Han, kana and Hangul are bigrammed (Lucene's CJKBigramFilter); the prolonged sound mark and the
// half-width (semi-)voiced marks belong to the kana before them.
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u30fc\\uff70';
const CJK_FOLLOWER = '\\p{M}\\uff9e\\uff9f';
// Scripts written without spaces between words: ICU's dictionary segmentation (Intl.Segmenter).
const SEA = '\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}';
const HAS_CJK_OR_SEA = new RegExp(`[${CJK}${SEA}]`, 'u');
const SEGMENT = new RegExp(`([${CJK}][${CJK}${CJK_FOLLOWER}]*)|([${SEA}][${SEA}\\p{M}]*)|[^${CJK}${SEA}]+`, 'gu');
const CJK_CHAR = new RegExp(`[${CJK}][${CJK_FOLLOWER}]*`, 'gu');
const APOSTROPHE = /['\u2019]/;
const POSSESSIVE = /['\u2019]s$/;

interface Context {
  readonly analyzer: LanguageAnalyzer;
  readonly stopWords: ReadonlySet<string>;
  readonly sink: TermSink;
}

/**
 * Cuts `text` into words and hands each analysed term to `sink`, in order. Offsets always index
 * `text` itself: words are matched on the original string and normalised one by one.
 */
export function scan(text: string, analyzer: LanguageAnalyzer, stopWords: ReadonlySet<string>, sink: TermSink): void {
  const context: Context = { analyzer, stopWords, sink };
  // Lowercasing the whole text once is several times faster than word by word, and keeps the
  // offsets: "İ" is the only character whose lowercase is longer (two code units), so it is
  // mapped to "i" first.
  const lower = (text.includes('\u0130') ? text.replace(/\u0130/g, 'i') : text).toLowerCase();
  const token = new RegExp(TOKEN);
  let match: RegExpExecArray | null;
  while ((match = token.exec(lower)) !== null) {
    const raw = match[0];
    const start = match.index;
    if (isAscii(raw)) {
      if (raw.includes("'")) splitApostrophes(raw, start, context);
      else emit(raw, start, start + raw.length, context);
    } else {
      const word = normalizedWords.get(raw);
      if (word !== undefined) emit(word, start, start + raw.length, context);
      else if (HAS_CJK_OR_SEA.test(raw)) splitScripts(raw, start, context);
      else if (APOSTROPHE.test(raw)) splitApostrophes(raw, start, context);
      else normalizeAndEmit(raw, start, context, true);
    }
  }
}

/**
 * Non-ASCII words (no apostrophe, no CJK or Thai-like script) → their normalised form, which
 * costs more than the stemming cache lookup (Arabic: NFKC, then five replacements).
 */
const normalizedWords = new Map<string, string>();
const MAX_NORMALIZED_WORDS = 50_000;

function emit(word: string, start: number, end: number, context: Context): void {
  if (word.length === 0 || word.length > MAX_WORD_LENGTH || context.stopWords.has(word)) return;
  const term = context.analyzer.term(word);
  if (term) context.sink(term, start, end, word);
}

function normalizeAndEmit(raw: string, start: number, context: Context, remember = false): void {
  const word = normalizeWord(raw);
  const end = start + raw.length;
  if (NORMALIZED_WORD.test(word)) {
    if (remember) {
      if (normalizedWords.size >= MAX_NORMALIZED_WORDS) normalizedWords.delete(normalizedWords.keys().next().value as string);
      normalizedWords.set(raw, word);
    }
    emit(word, start, end, context);
    return;
  }
  // The pieces share the span of the original word: their exact positions are lost to NFKC.
  for (const piece of word.matchAll(TOKEN)) emit(piece[0], start, end, context);
}

/**
 * Possessive "'s" is dropped (Lucene's EnglishPossessiveFilter) and elided articles too ("l'",
 * "dell'"); then English keeps the word whole ("don't", "o'neil"), other analysers split it.
 */
function splitApostrophes(raw: string, start: number, context: Context): void {
  const text = POSSESSIVE.test(raw) ? raw.slice(0, -2) : raw;
  const pieces: { text: string; start: number }[] = [];
  let from = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || text[i] === "'" || text[i] === '\u2019') {
      pieces.push({ text: text.slice(from, i), start: start + from });
      from = i + 1;
    }
  }
  const { elisions, keepsApostrophes } = context.analyzer;
  const [head, ...rest] = pieces;
  const kept = head && rest.length > 0 && elisions?.has(normalizeWord(head.text)) ? rest : pieces;
  if (keepsApostrophes) {
    const [first] = kept;
    if (first) normalizeAndEmit(text.slice(first.start - start), first.start, context);
    return;
  }
  for (const piece of kept) normalizeAndEmit(piece.text, piece.start, context);
}

function splitScripts(raw: string, start: number, context: Context): void {
  for (const segment of raw.matchAll(SEGMENT)) {
    const at = start + segment.index;
    if (segment[1] !== undefined) bigrams(segment[0], at, context);
    else if (segment[2] !== undefined) segmentWords(segment[0], at, context);
    else {
      for (const match of segment[0].matchAll(TOKEN)) {
        if (APOSTROPHE.test(match[0])) splitApostrophes(match[0], at + match.index, context);
        else normalizeAndEmit(match[0], at + match.index, context);
      }
    }
  }
}

/** Overlapping bigrams of a Han/kana/Hangul run; a lone character is its own term. */
function bigrams(run: string, start: number, context: Context): void {
  const chars: { text: string; start: number; end: number }[] = [];
  for (const match of run.matchAll(CJK_CHAR)) {
    const at = start + match.index;
    const char = match[0];
    chars.push({ text: isPlainCjk(char) ? char : normalizeWord(char), start: at, end: at + char.length });
  }
  if (chars.length < 2) {
    for (const only of chars) context.sink(only.text, only.start, only.end, only.text);
    return;
  }
  chars.reduce((previous, current) => {
    const pair = previous.text + current.text;
    context.sink(pair, previous.start, current.end, pair);
    return current;
  });
}

/** Ideographs, kana and Hangul syllables that NFKC leaves as they are (nearly all of them). */
function isPlainCjk(char: string): boolean {
  if (char.length !== 1) return false;
  const code = char.charCodeAt(0);
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x3041 && code <= 0x3096) ||
    (code >= 0x30a1 && code <= 0x30fa) ||
    (code >= 0xac00 && code <= 0xd7a3)
  );
}

let segmenter: Intl.Segmenter | undefined;

/** Thai, Lao, Khmer and Burmese words, found by ICU's dictionaries. */
function segmentWords(run: string, start: number, context: Context): void {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  for (const word of segmenter.segment(run)) {
    if (word.isWordLike) normalizeAndEmit(word.segment, start + word.index, context);
  }
}
