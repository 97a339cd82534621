// snowball-stemmers ships no types; this covers the part the analysers use.
declare module 'snowball-stemmers' {
  interface SnowballStemmer {
    /** Stems one lowercased word; returns it unchanged when no rule applies. */
    stem(word: string): string;
  }

  /** Throws for a name that `algorithms()` does not list. */
  export function newStemmer(algorithm: string): SnowballStemmer;
  export function algorithms(): string[];
}
