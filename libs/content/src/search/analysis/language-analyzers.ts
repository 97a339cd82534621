import { newStemmer, type SnowballStemmer } from 'snowball-stemmers';
import { foldDiacritics, normalizeArabic } from './normalize';
import { ELISIONS, STOP_WORDS } from './stop-words';

/** What differs between languages once the text is cut into words. */
export interface LanguageAnalyzer {
  /** Snowball algorithm name, or 'neutral'. */
  readonly id: string;
  /** Normalised (see normalizeWord) words to drop. */
  readonly stopWords: ReadonlySet<string>;
  /** Articles elided before an apostrophe, or null when the language has none. */
  readonly elisions: ReadonlySet<string> | null;
  /** English keeps "don't" whole (Porter2 knows apostrophes); other analysers split at them. */
  readonly keepsApostrophes: boolean;
  /** The indexed term of a normalised, non-stop word: stemmed, then diacritics folded. */
  term(word: string): string;
}

/** ISO 639-1 code → Snowball algorithm. */
const SNOWBALL_BY_CODE: ReadonlyMap<string, string> = new Map(
  Object.entries({
    en: 'english',
    es: 'spanish',
    fr: 'french',
    de: 'german',
    it: 'italian',
    pt: 'portuguese',
    nl: 'dutch',
    sv: 'swedish',
    no: 'norwegian',
    nb: 'norwegian',
    nn: 'norwegian',
    da: 'danish',
    fi: 'finnish',
    hu: 'hungarian',
    ro: 'romanian',
    ru: 'russian',
    tr: 'turkish',
    ca: 'catalan',
    eu: 'basque',
    cs: 'czech',
    ga: 'irish',
    sl: 'slovene',
    ta: 'tamil',
    hy: 'armenian',
    ar: 'arabic',
  }),
);
const SNOWBALL_NAMES: ReadonlySet<string> = new Set(SNOWBALL_BY_CODE.values());

/** Memoised stems per language: words follow Zipf's law, so a bounded map hits almost always. */
const MAX_CACHED_TERMS = 50_000;
const DIGIT = /[0-9]/;
const ARABIC_AND_THE = /^[\u0648\u0641]\u0627\u0644/;

class CachedAnalyzer implements LanguageAnalyzer {
  private readonly cache = new Map<string, string>();

  constructor(
    readonly id: string,
    readonly stopWords: ReadonlySet<string>,
    readonly elisions: ReadonlySet<string> | null,
    readonly keepsApostrophes: boolean,
    private readonly stemmer: SnowballStemmer | null,
  ) {}

  term(word: string): string {
    const cached = this.cache.get(word);
    if (cached !== undefined) return cached;
    // Numbers and codes ("2019", "p53", "covid19") are not stemmed, and not cached so that a
    // table of figures cannot evict the vocabulary.
    if (DIGIT.test(word)) return foldDiacritics(word);
    const term = this.compute(word);
    if (this.cache.size >= MAX_CACHED_TERMS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(word, term);
    return term;
  }

  private compute(word: string): string {
    if (!this.stemmer) return foldDiacritics(word);
    let w = word;
    // Snowball leaves "و"/"ف" + "ال" ("and the", "so the") alone; Lucene's light stemmer strips
    // it. Only on words long enough that "ال" + 3 letters remain ("والد", "والدة" stay whole).
    if (this.id === 'arabic' && w.length >= 6 && ARABIC_AND_THE.test(w)) w = w.slice(1);
    return foldDiacritics(this.stemmer.stem(w));
  }
}

function stopSet(id: string): Set<string> {
  const words = STOP_WORDS[id] ?? [];
  if (id !== 'arabic') return new Set(words);
  // Arabic attaches "و" (and) and "ف" (so) to the next word: "وهو", "فما" are stop words too.
  const normalized = words.map(normalizeArabic);
  return new Set([...normalized, ...normalized.map((w) => `\u0648${w}`), ...normalized.map((w) => `\u0641${w}`)]);
}

function build(id: string): LanguageAnalyzer {
  const elisions = ELISIONS[id];
  return new CachedAnalyzer(
    id,
    stopSet(id === 'neutral' ? 'english' : id),
    elisions ? new Set(elisions) : null,
    id === 'english',
    id === 'neutral' ? null : newStemmer(id),
  );
}

const analyzers = new Map<string, LanguageAnalyzer>();

function analyzerById(id: string): LanguageAnalyzer {
  let analyzer = analyzers.get(id);
  if (!analyzer) {
    analyzer = build(id);
    analyzers.set(id, analyzer);
  }
  return analyzer;
}

/**
 * Language-neutral analysis, for paragraphs whose language is unknown or has no stemmer:
 * lowercase, NFKC, diacritics folded, English possessives and the 33 English stop words removed
 * (they are function words in most Latin-script languages too), no stemming.
 */
export function neutralAnalyzer(): LanguageAnalyzer {
  return analyzerById('neutral');
}

/**
 * The analyser of an ISO 639-1 code ("en", "pt-BR", "EN_us" and Snowball names such as "english"
 * are accepted); unknown, empty or missing codes get the neutral analyser.
 */
export function analyzerFor(language: string | undefined): LanguageAnalyzer {
  if (!language) return neutralAnalyzer();
  const code = language.trim().toLowerCase();
  const primary = code.split(/[-_]/, 1)[0] ?? '';
  const id = SNOWBALL_BY_CODE.get(primary) ?? (SNOWBALL_NAMES.has(code) ? code : undefined);
  return id ? analyzerById(id) : neutralAnalyzer();
}
