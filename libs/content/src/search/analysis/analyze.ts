import { analyzerFor, neutralAnalyzer, type LanguageAnalyzer } from './language-analyzers';
import { isAscii } from './normalize';
import { scan } from './tokenizer';

/** A word of a text: [start, end) indexes the original text, `term` is what the index holds. */
export interface AnalyzedToken {
  start: number;
  end: number;
  term: string;
  /** The word lowercased and NFKC-normalised (Arabic: diacritics removed, letters unified), neither stemmed nor folded. */
  word: string;
}

/**
 * Terms of a passage, in order (duplicates kept, so callers count term frequency). `language` is
 * an ISO 639-1 code detected for the paragraph ('en','es','ar','zh',...), or undefined/'' when
 * unknown: languages without a Snowball stemmer get the language-neutral analysis.
 */
export function analyze(text: string, language?: string): string[] {
  const analyzer = analyzerFor(language);
  const terms: string[] = [];
  scan(text, analyzer, analyzer.stopWords, (term) => {
    terms.push(term);
  });
  return terms;
}

/**
 * Distinct terms to look up for a query: the union of the query analysed with each language's
 * analyser plus the language-neutral analysis, deduplicated, in order of first appearance.
 *
 * Stop words: each analysis drops its own, and also the stop words of the other languages
 * (English included, through the neutral analysis), so that "the" analysed as Spanish cannot
 * match the few Spanish paragraphs quoting English, where it would weigh a lot for being rare.
 * One- and two-letter Latin words are the exception, dropped only by their own language: they
 * are too often abbreviations ("IL-6" is not Italian "il", "MI", "CI", "OS").
 */
export function analyzeQuery(query: string, languages: readonly string[]): string[] {
  const analyzers = [...new Set([...languages.map((language) => analyzerFor(language)), neutralAnalyzer()])];
  const terms = new Set<string>();
  for (const analyzer of analyzers) {
    scan(query, analyzer, queryStopWords(analyzer, analyzers), (term) => {
      terms.add(term);
    });
  }
  return [...terms];
}

/**
 * Words of a text as shown to the user, with their [start, end) offsets in the original text and
 * their analysed term for `language` (for highlighting and /suggest). Stop words and over-long
 * words are left out, so the terms are exactly those of `analyze(text, language)`. Han, kana and
 * Hangul come as overlapping bigrams, as they are indexed.
 */
export function tokenize(text: string, language?: string): AnalyzedToken[] {
  const analyzer = analyzerFor(language);
  const tokens: AnalyzedToken[] = [];
  scan(text, analyzer, analyzer.stopWords, (term, start, end, word) => {
    tokens.push({ start, end, term, word });
  });
  return tokens;
}

const queryStopWordSets = new Map<string, ReadonlySet<string>>();
const isShortLatin = (word: string): boolean => word.length <= 2 && isAscii(word);

function queryStopWords(analyzer: LanguageAnalyzer, analyzers: readonly LanguageAnalyzer[]): ReadonlySet<string> {
  if (analyzers.length === 1) return analyzer.stopWords;
  const key = `${analyzer.id}:${analyzers
    .map((other) => other.id)
    .sort()
    .join(',')}`;
  let stopWords = queryStopWordSets.get(key);
  if (!stopWords) {
    const neutral = neutralAnalyzer();
    stopWords = new Set([
      ...analyzer.stopWords,
      ...neutral.stopWords,
      ...analyzers.flatMap((other) => [...other.stopWords].filter((word) => !isShortLatin(word))),
    ]);
    // Knowledge boxes have few language sets; the bound only guards against odd callers.
    if (queryStopWordSets.size >= 1024) queryStopWordSets.clear();
    queryStopWordSets.set(key, stopWords);
  }
  return stopWords;
}
