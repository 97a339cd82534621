/**
 * Text helpers of the offline REMi scorer (docs/remi.md): content words with a light stemmer, the
 * "salient" ones (numbers and capitalised words: names, places, dates — what a wrong answer most
 * often gets wrong), and answer sentences.
 */

const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by can could did do does doing ' +
    'down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours out over own same she should so some such than that the their theirs them then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours ' +
    'yes was were which whose what who known called named one two many much well may might must shall also'
  ).split(' '),
);

export interface Word {
  /** Lowercased, stemmed. */
  stem: string;
  /** A number or a capitalised word (not a stopword). */
  salient: boolean;
}

/** Crude English stemming: possessives and plural/verb `s`, enough to match "films" with "film". */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/['’]s$/, '');
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  return w;
}

/** Characters of a text looked at (longer texts are cut: the scorer's work stays bounded). */
export const MAX_TEXT_CHARS = 4000;

/** Content words of a text, in order; at most `MAX_TEXT_CHARS` characters are read. */
export function contentWords(text: string): Word[] {
  const out: Word[] = [];
  const re = /[\p{L}\p{N}][\p{L}\p{N}'’]*/gu;
  const s = text.slice(0, MAX_TEXT_CHARS);
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const raw = m[0];
    const lower = raw.toLowerCase();
    if (STOPWORDS.has(lower.replace(/['’]s$/, ''))) continue;
    const numeric = /\p{N}/u.test(raw);
    if (!numeric && raw.length < 2) continue;
    out.push({ stem: stem(raw), salient: numeric || /^\p{Lu}/u.test(raw) });
  }
  return out;
}

/** The stems of a text, for membership tests. */
export function stemSet(text: string): Set<string> {
  return new Set(contentWords(text).map((w) => w.stem));
}

/** Sentences of an answer (split after `.`, `!`, `?` followed by a space or the end), trimmed, empty ones dropped. */
export function sentences(text: string, max: number): string[] {
  return text
    .slice(0, MAX_TEXT_CHARS * 4)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((t) => t.trim())
    .filter(Boolean)
    .slice(0, max);
}

/**
 * Weighted share of `words` found in `known` (salient words weigh 3), and the salient words that
 * are missing. No words: `share` is null (nothing to check).
 */
export function support(
  words: Word[],
  known: Set<string>,
): { share: number | null; missingSalient: string[]; found: number; total: number } {
  let have = 0;
  let all = 0;
  let found = 0;
  const missing: string[] = [];
  const seen = new Set<string>();
  for (const w of words) {
    if (seen.has(w.stem)) continue;
    seen.add(w.stem);
    const weight = w.salient ? 3 : 1;
    all += weight;
    if (known.has(w.stem)) {
      have += weight;
      found++;
    } else if (w.salient) missing.push(w.stem);
  }
  return { share: all === 0 ? null : have / all, missingSalient: missing, found, total: seen.size };
}
