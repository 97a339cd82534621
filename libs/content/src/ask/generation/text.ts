/**
 * The small amount of text analysis generation needs: sentence spans, content terms and a token
 * estimate. Kept dependency-free and deterministic, because the extractive answer, the citations
 * and the context trimming must agree on where a sentence starts and ends.
 */

/** A half-open range `[start, end)` of UTF-16 offsets into the text it was computed from. */
export interface Span {
  start: number;
  end: number;
}

/** Lower-case words that end with a period without ending the sentence. */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'rev',
  'hon',
  'gov',
  'sen',
  'rep',
  'pres',
  'inc',
  'ltd',
  'corp',
  'bros',
  'vs',
  'etc',
  'cf',
  'al',
  'approx',
  'vol',
  'vols',
  'fig',
  'figs',
  'pp',
  'eds',
  'dept',
  'univ',
  'assn',
  'ave',
  'blvd',
  'jan',
  'feb',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'ca',
  'c',
  'e.g',
  'i.e',
  'a.m',
  'p.m',
  'ph.d',
]);

/** CJK full stops end a sentence without a following space. */
const CJK_TERMINATOR = /[。！？]/;

/**
 * Sentence spans of `text`, trimmed of surrounding white space, in order. A boundary is `.`, `!`
 * or `?` (with any closing quotes or brackets) followed by white space and a word that does not
 * start in lower case, unless the word before a single period is a known abbreviation, an initial
 * or a dotted acronym. A line break is a boundary unless the next line starts in lower case, which
 * is how a hard-wrapped sentence continues; a blank line always is.
 */
export function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  let from = 0;
  const push = (end: number): void => {
    const span = trimSpan(text, from, end);
    if (span) spans.push(span);
    from = end;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\n') {
      const next = nextNonSpace(text, i + 1);
      const blankLine = /\n\s*\n/.test(text.slice(i, Math.max(i + 1, next)));
      if (blankLine || next >= text.length || !/\p{Ll}/u.test(text[next] as string)) push(i);
      continue;
    }
    if (CJK_TERMINATOR.test(ch)) {
      push(i + 1);
      continue;
    }
    if (ch !== '.' && ch !== '!' && ch !== '?') continue;
    let end = i + 1;
    while (end < text.length && /[.!?]/.test(text[end] as string)) end++;
    while (end < text.length && /["'”’»)\]]/.test(text[end] as string)) end++;
    if (end < text.length && !/\s/.test(text[end] as string)) {
      i = end - 1;
      continue;
    }
    const next = nextNonSpace(text, end);
    if (next < text.length && /\p{Ll}/u.test(text[next] as string)) {
      i = end - 1;
      continue;
    }
    if (ch === '.' && end === i + 1 && !endsSentence(text, i)) continue;
    push(end);
    i = end - 1;
  }
  push(text.length);
  return spans;
}

/** The sentences of `text`, verbatim. */
export function splitSentences(text: string): string[] {
  return sentenceSpans(text).map((s) => text.slice(s.start, s.end));
}

/** Whether the single period at `dot` ends a sentence, judged by the word before it. */
function endsSentence(text: string, dot: number): boolean {
  let start = dot;
  while (start > 0 && /[\p{L}\p{N}.]/u.test(text[start - 1] as string)) start--;
  const word = text.slice(start, dot);
  if (!word) return true;
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  // Initials ("J. R. R. Tolkien") and dotted acronyms ("U.S.A.").
  if (/^\p{Lu}$/u.test(word) || /^(\p{L}\.)+\p{L}$/u.test(word)) return false;
  return true;
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}

function trimSpan(text: string, start: number, end: number): Span | null {
  while (start < end && /\s/.test(text[start] as string)) start++;
  while (end > start && /\s/.test(text[end - 1] as string)) end--;
  return end > start ? { start, end } : null;
}

const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do ' +
    'does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it ' +
    'its itself just me more most my myself no nor not of off on once only or other our ours ourselves out over own same she should so some ' +
    'such than that the their theirs them themselves then there these they this those through to too under until up very was we were what ' +
    'when where which while who whom whose why will with would you your yours yourself yourselves also may might must shall upon whether ' +
    'el la los las de del y en un una que es por con para le les des et du au une est'
  ).split(' '),
);

/** Lower case, accents removed, so "Émile" and "emile" meet. */
export function normalise(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** A light suffix stripper: enough for "films"/"film", "directed"/"director"/"directing" to meet. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith("'s")) w = w.slice(0, -2);
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('es') && /(?:ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  for (const suffix of [
    'ational',
    'ization',
    'ations',
    'ation',
    'ments',
    'ment',
    'ness',
    'ingly',
    'edly',
    'ing',
    'ers',
    'er',
    'or',
    'ed',
    'ly',
  ]) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  // "directed" → "direct", "running" → "runn" → "run": collapse a doubled final consonant.
  if (/([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** Word tokens of `text`, normalised, with their offsets; numbers are kept, punctuation dropped. */
export function wordTokens(text: string): string[] {
  return normalise(text).match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
}

/** Stemmed content terms (stop words dropped), in text order with repeats. */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const raw of wordTokens(text)) {
    const word = raw.replace(/['’]s$/, '').replace(/['’]/g, '');
    if (!word || STOPWORDS.has(word)) continue;
    if (word.length === 1 && !/\d/.test(word)) continue;
    out.push(stem(word));
  }
  return out;
}

/** Matches Han, Hiragana, Katakana and Hangul: roughly one token per character. */
const DENSE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

/**
 * A provider-independent token estimate: about four characters a token for alphabetic scripts,
 * one per character for CJK. It overestimates slightly for English, which is the safe side for
 * budgets.
 */
export function estimateTokens(text: string): number {
  if (!text) return 0;
  const dense = text.match(DENSE_SCRIPT)?.length ?? 0;
  return dense + Math.ceil((text.length - dense) / 4);
}
