import type { EntityManager } from 'typeorm';
import type { RetrieverHit } from './fusion';
import { SqlParams } from './sql';

/** BM25 parameters (Lucene's defaults; see docs/benchmarks.md for the tuning runs). */
export const BM25 = { k1: 1.2, b: 0.75 };

/**
 * Up to this many vectors in a KB, semantic search scans them exactly (exact under any filter);
 * above, the vectorset's HNSW index answers (measured on PGlite, 5 k vectors of 512 dimensions:
 * 70–90 ms exact, 4–8 ms HNSW once the tables are analysed).
 */
export const EXACT_SCAN_LIMIT = 2_000;

export interface RetrievalScope {
  kbid: string;
  /** Conditions on `p` (content.search_paragraphs), with their parameters already in `params`. */
  where: string;
  params: SqlParams;
}

/**
 * Okapi BM25 over the inverted index: idf = ln(1 + (N − df + 0.5) / (df + 0.5)), term weight
 * tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl)), with N, avgdl and df of the knowledge box.
 *
 * Two steps, exact either way. First every posting of the query's terms is scored from the
 * postings index alone (tf and the paragraph length ride in it) and the best `CANDIDATES × limit`
 * paragraphs are kept; then filters and security are applied to those candidates only. When at
 * least `limit` candidates pass, they are exactly the best `limit` that pass the filters (any
 * paragraph outside the candidates scores lower than every one inside). When fewer pass and
 * candidates were cut off (a selective filter), the query runs again with the filters applied to
 * every posting.
 */
export async function keywordSearch(
  m: EntityManager,
  scope: RetrievalScope,
  terms: string[],
  limit: number,
  minScore: number,
): Promise<RetrieverHit[]> {
  if (terms.length === 0 || limit <= 0) return [];
  const candidates = limit * CANDIDATES;
  const filterParams = [...scope.params.values];
  const first = await bm25(m, scope, terms, limit, minScore, candidates);
  if (first.hits.length >= limit || first.candidates < candidates) return first.hits;
  return (await bm25(m, { ...scope, params: new SqlParams(filterParams) }, terms, limit, minScore, undefined)).hits;
}

/** The exact statement alone: filters joined to every posting (keywordSearch's fallback). */
export async function keywordSearchExact(
  m: EntityManager,
  scope: RetrievalScope,
  terms: string[],
  limit: number,
  minScore: number,
): Promise<RetrieverHit[]> {
  if (terms.length === 0 || limit <= 0) return [];
  return (await bm25(m, scope, terms, limit, minScore, undefined)).hits;
}

/** Candidates scored per result wanted before filters apply (see keywordSearch). */
export const CANDIDATES = 4;

async function bm25(
  m: EntityManager,
  scope: RetrievalScope,
  terms: string[],
  limit: number,
  minScore: number,
  candidates: number | undefined,
): Promise<{ hits: RetrieverHit[]; candidates: number }> {
  const p = scope.params;
  const kb = p.add(scope.kbid);
  const min = minScore > 0 ? `WHERE score >= ${p.add(minScore)}` : '';
  // Everything in float8: a numeric literal (0.75) made PostgreSQL compute in numeric, 3× slower
  // per posting. Per term, idf·(k1+1) is computed once; per posting only tf and length vary.
  const head = `
    WITH st AS (SELECT paragraphs::float8 AS n, ${f8(BM25.k1 * (1 - BM25.b))} AS c1,
                       ${f8(BM25.k1 * BM25.b)} / greatest(total_length::float8 / greatest(paragraphs, 1), 1) AS c2
                  FROM content.search_stats WHERE kbid = ${kb}),
    qt AS (SELECT t.term, ln(1 + (st.n - t.df + 0.5) / (t.df + 0.5)) * ${f8(BM25.k1 + 1)} AS w
             FROM content.search_terms t CROSS JOIN st
            WHERE t.kbid = ${kb} AND t.term = ANY(${p.add(terms)}::text[]) AND t.df > 0)`;
  const score = `sum(qt.w * po.tf / (po.tf + st.c1 + st.c2 * po.length))`;
  const postings = `qt CROSS JOIN st JOIN content.search_postings po ON po.kbid = ${kb} AND po.term = qt.term`;
  const sql =
    candidates === undefined
      ? `${head},
    scored AS (
      SELECT po.paragraph, ${score} AS score FROM ${postings}
        JOIN content.search_paragraphs p ON p.id = po.paragraph
       WHERE ${scope.where}
       GROUP BY po.paragraph)
    SELECT paragraph::text AS id, score, 0 AS candidates FROM scored ${min}
     ORDER BY score DESC, paragraph LIMIT ${p.add(limit)}`
      : `${head},
    best AS (
      SELECT po.paragraph, ${score} AS score FROM ${postings}
       GROUP BY po.paragraph
       ORDER BY score DESC, po.paragraph LIMIT ${p.add(candidates)}),
    scored AS (
      SELECT best.paragraph, best.score FROM best JOIN content.search_paragraphs p ON p.id = best.paragraph WHERE ${scope.where})
    SELECT r.paragraph::text AS id, r.score, c.n AS candidates
      FROM (SELECT count(*)::int AS n FROM best) c
      LEFT JOIN LATERAL (SELECT paragraph, score FROM scored ${min} ORDER BY score DESC, paragraph LIMIT ${p.add(limit)}) r ON true
     ORDER BY r.score DESC, r.paragraph`;
  // The candidates branch always answers one row at least (with no id when nothing passed), to count them.
  const rows = (await m.query(sql, p.values)) as { id: string | null; score: number | string; candidates: number }[];
  const counted = rows[0]?.candidates ?? 0;
  const hits = rows.filter((r): r is { id: string; score: number | string; candidates: number } => r.id !== null);
  return { hits: hits.map((r) => ({ id: r.id, score: Number(r.score) })), candidates: counted };
}

/** A float8 literal (a bare 0.75 is numeric in PostgreSQL, and numeric arithmetic is slow). */
function f8(x: number): string {
  return `${x}::float8`;
}

export interface VectorQuery {
  vector: number[];
  vectorset: string;
  similarity: 'COSINE' | 'DOT';
  minScore: number;
  limit: number;
  /** Vectors of this vectorset in the KB (decides exact scan or HNSW). */
  population: number;
}

/**
 * Nearest paragraphs by vector. Small KBs (most of them) are scanned exactly under the filters;
 * large ones use the vectorset's HNSW index with pgvector's iterative scan, so a selective filter
 * still fills `limit` when enough rows match.
 */
export async function semanticSearch(m: EntityManager, scope: RetrievalScope, q: VectorQuery): Promise<RetrieverHit[]> {
  if (q.limit <= 0 || q.vector.length === 0) return [];
  const p = scope.params;
  const dim = q.vector.length;
  const literal = `[${q.vector.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;
  const score = (col: string, qv: string) => (q.similarity === 'COSINE' ? `(1 - (${col} <=> ${qv}))` : `(-(${col} <#> ${qv}))`);
  if (q.population <= EXACT_SCAN_LIMIT) {
    const qv = `${p.add(literal)}::vector`;
    const sql = `
      SELECT s.id, s.score FROM (
        SELECT v.paragraph::text AS id, ${score('v.vector', qv)} AS score
          FROM content.search_vectors v JOIN content.search_paragraphs p ON p.id = v.paragraph
         WHERE v.kbid = ${p.add(scope.kbid)} AND v.vectorset = ${p.add(q.vectorset)} AND v.dimension = ${dim} AND ${scope.where}
      ) s WHERE s.score >= ${p.add(q.minScore)} ORDER BY s.score DESC, s.id LIMIT ${p.add(q.limit)}`;
    const rows = (await m.query(sql, p.values)) as { id: string; score: number | string }[];
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }
  // The partial index's predicate must appear literally for the planner to use it; the vectorset
  // name was checked to be plain characters when the index was created.
  const vs = q.vectorset.replace(/'/g, "''");
  const qv = `${p.add(literal)}::vector(${dim})`;
  const col = `v.vector::vector(${dim})`;
  const op = q.similarity === 'COSINE' ? '<=>' : '<#>';
  return m.transaction(async (tx) => {
    await tx.query(`SET LOCAL hnsw.iterative_scan = relaxed_order`);
    await tx.query(`SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(40, q.limit * 2))}`);
    const sql = `
      SELECT s.id, s.score FROM (
        SELECT v.paragraph::text AS id, ${score(col, qv)} AS score
          FROM content.search_vectors v JOIN content.search_paragraphs p ON p.id = v.paragraph
         WHERE v.vectorset = '${vs}' AND v.dimension = ${dim} AND v.kbid = ${p.add(scope.kbid)} AND ${scope.where}
         ORDER BY ${col} ${op} ${qv}
         LIMIT ${p.add(q.limit)}
      ) s WHERE s.score >= ${p.add(q.minScore)} ORDER BY s.score DESC, s.id`;
    const rows = (await tx.query(sql, p.values)) as { id: string; score: number | string }[];
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  });
}
