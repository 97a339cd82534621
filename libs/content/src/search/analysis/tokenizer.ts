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
const POSSESSIVE = /['\u2019][sS]$/;

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
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    const start = match.index;
    if (isAscii(raw)) {
      // The common case, kept short: ASCII lowercasing never changes lengths.
      if (raw.includes("'")) splitApostrophes(raw, start, context);
      else emit(raw.toLowerCase(), start, start + raw.length, context);
    } else if (HAS_CJK_OR_SEA.test(raw)) {
      splitScripts(raw, start, context);
    } else if (APOSTROPHE.test(raw)) {
      splitApostrophes(raw, start, context);
    } else {
      normalizeAndEmit(raw, start, context);
    }
  }
}

function emit(word: string, start: number, end: number, context: Context): void {
  if (word.length === 0 || word.length > MAX_WORD_LENGTH || context.stopWords.has(word)) return;
  const term = context.analyzer.term(word);
  if (term) context.sink(term, start, end, word);
}

function normalizeAndEmit(raw: string, start: number, context: Context): void {
  const word = normalizeWord(raw);
  const end = start + raw.length;
  if (NORMALIZED_WORD.test(word)) {
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
    chars.push({ text: normalizeWord(match[0]), start: at, end: at + match[0].length });
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

let segmenter: Intl.Segmenter | undefined;

/** Thai, Lao, Khmer and Burmese words, found by ICU's dictionaries. */
function segmentWords(run: string, start: number, context: Context): void {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  for (const word of segmenter.segment(run)) {
    if (word.isWordLike) normalizeAndEmit(word.segment, start + word.index, context);
  }
}
