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
}

/**
 * The reranker port (API-MAP 2.2 `reranker`): reorders the best `window` candidates of a /find.
 * `noop` keeps the fused order; `predict` is the built-in lexical reranker below. A cross-encoder
 * (a model scoring query and passage together) plugs in here as another implementation.
 */
export interface Reranker {
  readonly name: string;
  /** The same candidates with new scores, best first. */
  rerank(query: RerankQuery, candidates: RerankCandidate[]): RerankCandidate[];
}

export const NOOP_RERANKER: Reranker = { name: 'noop', rerank: (_q, candidates) => candidates };

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

/** Features of `text` for the query, both analysed in the paragraph's language (so their stems agree). */
export function lexicalFeatures(query: string, text: string, language: string): LexicalFeatures {
  return featuresOf([...new Set(analyze(query, language || undefined))], text, language);
}

function featuresOf(distinct: string[], text: string, language: string): LexicalFeatures {
  if (distinct.length === 0) return { coverage: 0, proximity: 0, order: 0 };
  const tokens = analyze(text, language || undefined);
  const wanted = new Map(distinct.map((t, i) => [t, i]));
  const positions: { pos: number; term: number }[] = [];
  tokens.forEach((t, pos) => {
    const i = wanted.get(t);
    if (i !== undefined) positions.push({ pos, term: i });
  });
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
  // Query bigrams (consecutive distinct terms) found adjacent and in order.
  let order = 0;
  if (distinct.length >= 2) {
    const adjacent = new Set<string>();
    for (let i = 1; i < tokens.length; i++) adjacent.add(`${tokens[i - 1]}\u0000${tokens[i]}`);
    let found = 0;
    for (let i = 1; i < distinct.length; i++) if (adjacent.has(`${distinct[i - 1]}\u0000${distinct[i]}`)) found++;
    order = found / (distinct.length - 1);
  }
  return { coverage, proximity, order };
}

/**
 * The built-in reranker (`predict`): keeps what fusion found and how it ranked it, and adds what
 * BM25 and a bag-of-words vector cannot see — whether a paragraph holds all of the query, close
 * together, in the query's order.
 */
export class LexicalReranker implements Reranker {
  readonly name = 'predict';

  constructor(private readonly weights: LexicalWeights = DEFAULT_LEXICAL_WEIGHTS) {}

  rerank(query: RerankQuery, candidates: RerankCandidate[]): RerankCandidate[] {
    if (candidates.length < 2 || !query.text.trim()) return candidates;
    const top = Math.max(...candidates.map((c) => c.score));
    const scale = top > 0 ? top : 1;
    const w = this.weights;
    // The query is analysed once per language among the candidates.
    const terms = new Map<string, string[]>();
    const termsFor = (language: string): string[] => {
      let t = terms.get(language);
      if (!t) terms.set(language, (t = [...new Set(analyze(query.text, language || undefined))]));
      return t;
    };
    return candidates
      .map((c, i) => {
        const f = featuresOf(termsFor(c.language), c.text, c.language);
        return { c: { ...c, score: c.score / scale + w.coverage * f.coverage + w.proximity * f.proximity + w.order * f.order }, i };
      })
      .sort((a, b) => b.c.score - a.c.score || a.i - b.i)
      .map((x) => x.c);
  }
}
