import { analyze } from '../analysis';

/** A retrieved paragraph as the rerankers see it. */
export interface RerankCandidate {
  id: string;
  text: string;
  /** The paragraph's language, for its analysis (stems must match the query's terms). */
  language: string;
  /** Its score after fusion; higher is better. */
  score: number;
}

export interface RerankQuery {
  text: string;
  /** Aborts a reranker that waits on a model (the caller went away). */
  signal?: AbortSignal;
}

/**
 * The reranker port (API-MAP 2.2 `reranker`): reorders the best `window` candidates of a /find.
 * `noop` keeps the fused order; `predict` is the built-in lexical reranker below, computed in
 * place; `cross-encoder` (CrossEncoderReranker) asks a model run by the understanding service.
 * Asynchronous, so a reranker may wait on a model; the built-in one answers without waiting.
 */
export interface Reranker {
  readonly name: string;
  /** The same candidates with new scores, best first. */
  rerank(query: RerankQuery, candidates: RerankCandidate[]): Promise<RerankCandidate[]>;
}

export const NOOP_RERANKER: Reranker = { name: 'noop', rerank: async (_q, candidates) => candidates };

/** The candidates in the order of new scores (ties keep their order), each with its new score. */
export function byScores(candidates: RerankCandidate[], scores: readonly number[]): RerankCandidate[] {
  return candidates
    .map((c, i) => ({ c: { ...c, score: scores[i] as number }, i }))
    .sort((a, b) => b.c.score - a.c.score || a.i - b.i)
    .map((x) => x.c);
}

/** What the lexical reranker measures of a paragraph against the query, each in [0, 1]. */
export interface LexicalFeatures {
  /** Share of the query's distinct terms present. */
  coverage: number;
  /** Matched terms over the shortest stretch of the paragraph holding them all (two or more matched). */
  proximity: number;
  /** Share of the query's consecutive term pairs found side by side, in the query's order. */
  order: number;
}

export interface LexicalWeights {
  coverage: number;
  proximity: number;
  order: number;
}

/**
 * Fitted on SciFact *train* queries (tools: `npm run bench -- rerank-tune`), as the default fusion
 * was: the fused score (scaled to the best candidate's) plus these weights times the features.
 */
export const DEFAULT_LEXICAL_WEIGHTS: LexicalWeights = { coverage: 0.1, proximity: 0, order: 0.2 };

/** A candidate's reranked score: its fused score scaled to the best candidate's, plus the weighted features. */
export function rerankScore(score: number, best: number, f: LexicalFeatures, w: LexicalWeights): number {
  return score / (best > 0 ? best : 1) + w.coverage * f.coverage + w.proximity * f.proximity + w.order * f.order;
}

/** Features of `text` for the query, both analysed in the paragraph's language (so their stems agree). */
export function lexicalFeatures(query: string, text: string, language: string): LexicalFeatures {
  return featuresOf([...new Set(analyze(query, language || undefined))], analyze(text, language || undefined));
}

/** The features of a token sequence for the query's distinct terms (strings, or the term ids of TokenCache). */
function featuresOf<T>(distinct: readonly T[], tokens: ArrayLike<T>): LexicalFeatures {
  if (distinct.length === 0) return { coverage: 0, proximity: 0, order: 0 };
  const wanted = new Map(distinct.map((t, i) => [t, i]));
  const positions: { pos: number; term: number }[] = [];
  const bigrams = new Set<number>();
  let previous = -1;
  for (let pos = 0; pos < tokens.length; pos++) {
    const i = wanted.get(tokens[pos] as T);
    if (i !== undefined) {
      positions.push({ pos, term: i });
      // Query bigram i-1 → i found side by side, in the query's order.
      if (i > 0 && previous === i - 1) bigrams.add(i - 1);
    }
    previous = i ?? -1;
  }
  const matched = new Set(positions.map((p) => p.term));
  const coverage = matched.size / distinct.length;
  // Shortest window holding every matched term at least once (two pointers over the positions).
  let proximity = 0;
  if (matched.size >= 2) {
    const counts = new Map<number, number>();
    let have = 0;
    let best = Infinity;
    for (let lo = 0, hi = 0; hi < positions.length; hi++) {
      const h = positions[hi] as { pos: number; term: number };
      counts.set(h.term, (counts.get(h.term) ?? 0) + 1);
      if (counts.get(h.term) === 1) have++;
      while (have === matched.size) {
        const l = positions[lo] as { pos: number; term: number };
        best = Math.min(best, h.pos - l.pos + 1);
        counts.set(l.term, (counts.get(l.term) as number) - 1);
        if (counts.get(l.term) === 0) have--;
        lo++;
      }
    }
    proximity = matched.size / best;
  }
  const order = distinct.length >= 2 ? bigrams.size / (distinct.length - 1) : 0;
  return { coverage, proximity, order };
}

/**
 * Paragraphs' analysed terms, by paragraph id, as term ids: a paragraph's text never changes under
 * its id, and the same paragraphs come back query after query, so their analysis (most of the
 * reranker's cost) is done once. Bounded: least recently used paragraphs go first; the term
 * dictionary is reset, with the cache, if it ever outgrows its bound.
 */
export class TokenCache {
  private readonly terms = new Map<string, number>();
  private readonly docs = new Map<string, Int32Array>();
  /** Bumped when the dictionary is reset: ids of an older generation mean nothing. */
  generation = 0;

  constructor(
    private readonly maxDocs = 20_000,
    private readonly maxTerms = 1_000_000,
  ) {}

  termId(term: string): number {
    let id = this.terms.get(term);
    if (id === undefined) {
      if (this.terms.size >= this.maxTerms) {
        this.terms.clear();
        this.docs.clear();
        this.generation++;
      }
      id = this.terms.size;
      this.terms.set(term, id);
    }
    return id;
  }

  tokens(key: string, text: string, language: string): Int32Array {
    const hit = this.docs.get(key);
    if (hit) {
      this.docs.delete(key);
      this.docs.set(key, hit);
      return hit;
    }
    const ids = Int32Array.from(analyze(text, language || undefined), (t) => this.termId(t));
    if (this.docs.size >= this.maxDocs) this.docs.delete(this.docs.keys().next().value as string);
    this.docs.set(key, ids);
    return ids;
  }
}

/**
 * The built-in reranker (`predict`): keeps what fusion found and how it ranked it, and adds what
 * BM25 and a bag-of-words vector cannot see — whether a paragraph holds all of the query, close
 * together, in the query's order.
 */
export class LexicalReranker implements Reranker {
  readonly name = 'predict';

  constructor(
    private readonly weights: LexicalWeights = DEFAULT_LEXICAL_WEIGHTS,
    private readonly cache = new TokenCache(),
  ) {}

  async rerank(query: RerankQuery, candidates: RerankCandidate[]): Promise<RerankCandidate[]> {
    return this.rank(query, candidates);
  }

  /** The reranking itself, synchronous (benchmarks and tuning call it directly). */
  rank(query: RerankQuery, candidates: RerankCandidate[]): RerankCandidate[] {
    if (candidates.length < 2 || !query.text.trim()) return candidates;
    const top = Math.max(...candidates.map((c) => c.score));
    let features: LexicalFeatures[] = [];
    // Twice at most: a dictionary reset in the first pass (pathological) makes the second exact.
    for (let attempt = 0; attempt < 2; attempt++) {
      const generation = this.cache.generation;
      const tokens = candidates.map((c) => this.cache.tokens(c.id, c.text, c.language));
      // The query is analysed once per language among the candidates.
      const terms = new Map<string, number[]>();
      const termsFor = (language: string): number[] => {
        let t = terms.get(language);
        if (!t) terms.set(language, (t = [...new Set(analyze(query.text, language || undefined))].map((x) => this.cache.termId(x))));
        return t;
      };
      features = candidates.map((c, i) => featuresOf(termsFor(c.language), tokens[i] as Int32Array));
      if (generation === this.cache.generation) break;
    }
    return byScores(
      candidates,
      candidates.map((c, i) => rerankScore(c.score, top, features[i] as LexicalFeatures, this.weights)),
    );
  }
}
