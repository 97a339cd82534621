import type { EntityManager } from 'typeorm';
import type { RetrieverHit } from './fusion';
import type { SqlParams } from './sql';

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
 * Filters and security apply to the candidate paragraphs before ranking.
 */
export async function keywordSearch(m: EntityManager, scope: RetrievalScope, terms: string[], limit: number, minScore: number): Promise<RetrieverHit[]> {
  if (terms.length === 0 || limit <= 0) return [];
  const p = scope.params;
  const kb = p.add(scope.kbid);
  // Everything in float8: a numeric literal (0.75) made PostgreSQL compute in numeric, 3× slower
  // per posting. Per term, idf·(k1+1) is computed once; per posting only tf and length vary.
  const sql = `
    WITH st AS (SELECT paragraphs::float8 AS n, ${f8(BM25.k1 * (1 - BM25.b))} AS c1,
                       ${f8(BM25.k1 * BM25.b)} / greatest(total_length::float8 / greatest(paragraphs, 1), 1) AS c2
                  FROM content.search_stats WHERE kbid = ${kb}),
    qt AS (SELECT t.term, ln(1 + (st.n - t.df + 0.5) / (t.df + 0.5)) * ${f8(BM25.k1 + 1)} AS w
             FROM content.search_terms t CROSS JOIN st
            WHERE t.kbid = ${kb} AND t.term = ANY(${p.add(terms)}::text[]) AND t.df > 0),
    scored AS (
      SELECT po.paragraph, sum(qt.w * po.tf / (po.tf + st.c1 + st.c2 * p.length)) AS score
        FROM qt CROSS JOIN st
        JOIN content.search_postings po ON po.kbid = ${kb} AND po.term = qt.term
        JOIN content.search_paragraphs p ON p.id = po.paragraph
       WHERE ${scope.where}
       GROUP BY po.paragraph)
    SELECT paragraph::text AS id, score FROM scored
     ${minScore > 0 ? `WHERE score >= ${p.add(minScore)}` : ''}
     ORDER BY score DESC, paragraph
     LIMIT ${p.add(limit)}`;
  const rows = (await m.query(sql, p.values)) as { id: string; score: number | string }[];
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
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
