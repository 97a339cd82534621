import type { EntityManager } from 'typeorm';
import type { RetrieverHit } from '../query/fusion';
import { CANDIDATES, keywordSearchExact, semanticSearch, type RetrievalScope, type VectorQuery } from '../query/retrievers';
import { SqlParams } from '../query/sql';
import type { KbMemoryIndex, MemoryFilter } from './kb-memory-index';
import { atLeast } from './pick';

/**
 * The retrievers of query/retrievers.ts with the scoring done in memory (docs/decisions/0014).
 * Same hits, same scores, same order:
 * - `filter` set (security groups, `show_hidden`, and filters the index can decide: tags, labels,
 *   fields, languages, resources): every paragraph is scored and filtered in memory: the exact
 *   answer, with no statement at all;
 * - `filter` null (dates, keyword filters, slugs…): the best `CANDIDATES × limit` scored
 *   paragraphs are checked against the request's SQL condition in one statement; when fewer than
 *   `limit` pass and candidates were cut off, the SQL path's exact statement answers — the
 *   contract of keywordSearch.
 */
export async function memoryKeywordSearch(
  m: EntityManager,
  idx: KbMemoryIndex,
  scope: RetrievalScope,
  filter: MemoryFilter | null,
  terms: string[],
  limit: number,
  minScore: number,
): Promise<RetrieverHit[]> {
  if (terms.length === 0 || limit <= 0) return [];
  if (filter) {
    const { pass } = idx.mask(filter);
    return hitsOf(idx, idx.bm25(terms, limit, (_o, s) => atLeast(s, minScore), pass).hits);
  }
  const candidates = limit * CANDIDATES;
  const best = idx.bm25(terms, candidates, () => true).hits;
  const pass = await passing(
    m,
    scope,
    best.map((h) => idx.id(h.ord)),
  );
  const hits = best.filter((h) => atLeast(h.score, minScore) && pass.has(idx.id(h.ord))).slice(0, limit);
  if (hits.length >= limit || best.length < candidates) return hitsOf(idx, hits);
  return keywordSearchExact(m, scope, terms, limit, minScore);
}

/** Vectors a filtered exact scan reads at most (~60 ms of 384 dimensions on one core); more go to HNSW in SQL. */
export const EXACT_SCAN_MAX = 250_000;

/** Semantic search scored in memory (exact; see memoryKeywordSearch for the filter contract). */
export async function memorySemanticSearch(
  m: EntityManager,
  idx: KbMemoryIndex,
  scope: RetrievalScope,
  filter: MemoryFilter | null,
  q: Omit<VectorQuery, 'population'>,
  exactScanMax = EXACT_SCAN_MAX,
): Promise<RetrieverHit[]> {
  if (q.limit <= 0 || q.vector.length === 0) return [];
  if (filter) {
    const mask = idx.mask(filter);
    // An exact scan reads every vector the filter lets through: above `exactScanMax` of them, the
    // SQL statement's HNSW index answers sooner (approximately, as it does for every KB on SQL).
    const population = idx.population(q.vectorset);
    if (mask.count > exactScanMax && population > exactScanMax) return semanticSearch(m, scope, { ...q, population });
    return hitsOf(idx, idx.similarity(q.vectorset, q.vector, q.similarity, q.limit, (_o, s) => atLeast(s, q.minScore), mask).hits);
  }
  const candidates = q.limit * CANDIDATES;
  const above = idx.similarity(q.vectorset, q.vector, q.similarity, candidates, (_o, s) => atLeast(s, q.minScore));
  const pass = await passing(
    m,
    scope,
    above.hits.map((h) => idx.id(h.ord)),
  );
  const hits = above.hits.filter((h) => pass.has(idx.id(h.ord))).slice(0, q.limit);
  if (hits.length >= q.limit || above.passing <= candidates) return hitsOf(idx, hits);
  return semanticSearch(m, scope, { ...q, population: idx.population(q.vectorset) });
}

function hitsOf(idx: KbMemoryIndex, picked: { ord: number; score: number }[]): RetrieverHit[] {
  return picked.map((h) => ({ id: idx.id(h.ord), score: h.score }));
}

/** Which of `ids` pass the request's condition on `p` (content.search_paragraphs). */
async function passing(m: EntityManager, scope: RetrievalScope, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const p = new SqlParams(scope.params.values);
  const rows = (await m.query(
    `SELECT p.id::text AS id FROM content.search_paragraphs p WHERE p.id = ANY(${p.add(ids)}::bigint[]) AND ${scope.where}`,
    p.values,
  )) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}
