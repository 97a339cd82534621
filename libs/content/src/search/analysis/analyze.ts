import { analyzerFor, neutralAnalyzer, type LanguageAnalyzer } from './language-analyzers';
import { scan } from './tokenizer';

/** A word of a text: [start, end) indexes the original text, `term` is what the index holds. */
export interface AnalyzedToken {
  start: number;
  end: number;
  term: string;
  /** The word lowercased and NFKC-normalised, neither stemmed nor folded. */
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
 * A word that is a stop word in any of those languages is dropped from every analysis, so that
 * "the" analysed as Spanish cannot match the rare Spanish paragraphs quoting English (where it
 * would weigh a lot, being rare).
 */
export function analyzeQuery(query: string, languages: readonly string[]): string[] {
  const analyzers = [...new Set([...languages.map((language) => analyzerFor(language)), neutralAnalyzer()])];
  const stopWords = queryStopWords(analyzers);
  const terms = new Set<string>();
  for (const analyzer of analyzers) {
    scan(query, analyzer, stopWords, (term) => {
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

const stopWordUnions = new Map<string, ReadonlySet<string>>();

function queryStopWords(analyzers: readonly LanguageAnalyzer[]): ReadonlySet<string> {
  const [only] = analyzers;
  if (only && analyzers.length === 1) return only.stopWords;
  const key = analyzers.map((analyzer) => analyzer.id).sort().join(',');
  let union = stopWordUnions.get(key);
  if (!union) {
    union = new Set(analyzers.flatMap((analyzer) => [...analyzer.stopWords]));
    // Knowledge boxes have few language sets; the bound only guards against odd callers.
    if (stopWordUnions.size >= 256) stopWordUnions.clear();
    stopWordUnions.set(key, union);
  }
  return union;
}
