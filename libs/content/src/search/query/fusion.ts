export interface RetrieverHit {
  id: string;
  score: number;
}

export type ScoreType = 'BM25' | 'VECTOR' | 'BOTH' | 'RERANKER' | 'RELATION_RELEVANCE';

export interface FusedHit {
  id: string;
  score: number;
  scoreType: ScoreType;
  keywordScore?: number;
  semanticScore?: number;
}

export interface RrfOptions {
  k: number;
  window: number;
  boosting: { keyword: number; semantic: number };
}

/**
 * Reciprocal Rank Fusion (API-MAP 4.5): score = Σ w / (k + rank), rank 0-based, over the first
 * `window` hits of each retriever. A hit found by both is BOTH. When only one retriever returned
 * anything, there is nothing to fuse: its own order and scores are kept.
 */
export function rrf(keyword: RetrieverHit[], semantic: RetrieverHit[], o: RrfOptions): FusedHit[] {
  if (keyword.length === 0 || semantic.length === 0) return single(keyword, semantic);
  return merge(
    keyword.slice(0, o.window).map((h, rank) => ({ h, score: o.boosting.keyword / (o.k + rank) })),
    semantic.slice(0, o.window).map((h, rank) => ({ h, score: o.boosting.semantic / (o.k + rank) })),
  );
}

/**
 * Score fusion for a weak semantic leg (docs/decisions/0012): keyword scores are scaled by the
 * best keyword score of the query, semantic similarities are taken above the model's threshold and
 * scaled likewise, then combined as `keyword + weight · semantic`. With a small weight the
 * semantic model reorders close keyword hits and adds strong semantic-only hits, but cannot push
 * a clear keyword winner down — so the hybrid never falls far below keyword alone.
 */
export function weightedFusion(
  keyword: RetrieverHit[],
  semantic: RetrieverHit[],
  o: { weight: number; window: number; floor: number },
): FusedHit[] {
  if (keyword.length === 0 || semantic.length === 0) return single(keyword, semantic);
  const kw = keyword.slice(0, o.window);
  const sem = semantic.slice(0, o.window);
  const kmax = Math.max(...kw.map((h) => h.score), 1e-9);
  const smax = Math.max(...sem.map((h) => h.score - o.floor), 1e-9);
  return merge(
    kw.map((h) => ({ h, score: h.score / kmax })),
    sem.map((h) => ({ h, score: (o.weight * Math.max(h.score - o.floor, 0)) / smax })),
  );
}

/** Adds up the contributions of both retrievers per paragraph; a paragraph found by both is BOTH. */
function merge(keyword: { h: RetrieverHit; score: number }[], semantic: { h: RetrieverHit; score: number }[]): FusedHit[] {
  const out = new Map<string, FusedHit>();
  for (const { h, score } of keyword) out.set(h.id, { id: h.id, score, scoreType: 'BM25', keywordScore: h.score });
  for (const { h, score } of semantic) {
    const prev = out.get(h.id);
    if (prev) {
      prev.score += score;
      prev.scoreType = 'BOTH';
      prev.semanticScore = h.score;
    } else out.set(h.id, { id: h.id, score, scoreType: 'VECTOR', semanticScore: h.score });
  }
  return sortFused([...out.values()]);
}

function single(keyword: RetrieverHit[], semantic: RetrieverHit[]): FusedHit[] {
  if (keyword.length) return keyword.map((h) => ({ id: h.id, score: h.score, scoreType: 'BM25' as const, keywordScore: h.score }));
  return semantic.map((h) => ({ id: h.id, score: h.score, scoreType: 'VECTOR' as const, semanticScore: h.score }));
}

function sortFused(hits: FusedHit[]): FusedHit[] {
  // Ties keep a stable, deterministic order (keyword score, then id).
  return hits.sort(
    (a, b) => b.score - a.score || (b.keywordScore ?? 0) - (a.keywordScore ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/**
 * The `graph` feature's paragraphs joined to a fused list by RRF (k = 60, 0-based ranks): a
 * paragraph in both lists sums both terms. Paragraphs found only through the graph are scored
 * RELATION_RELEVANCE; alone (no other feature), the graph's own order and counts are kept.
 */
export function fuseGraph(fused: FusedHit[], graph: RetrieverHit[], k = 60): FusedHit[] {
  if (graph.length === 0) return fused;
  if (fused.length === 0) return graph.map((h) => ({ id: h.id, score: h.score, scoreType: 'RELATION_RELEVANCE' as const }));
  const out = new Map<string, FusedHit>();
  fused.forEach((h, rank) => out.set(h.id, { ...h, score: 1 / (k + rank) }));
  graph.forEach((h, rank) => {
    const hit = out.get(h.id);
    if (hit) hit.score += 1 / (k + rank);
    else out.set(h.id, { id: h.id, score: 1 / (k + rank), scoreType: 'RELATION_RELEVANCE' });
  });
  return [...out.values()].sort((a, b) => b.score - a.score);
}
