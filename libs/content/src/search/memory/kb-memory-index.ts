import type { RetrieverHit } from '../query/fusion';
import { BM25 } from '../query/retrievers';
import { LANES, VectorBlock, norm2, queryFloat32 } from './dot-kernel';

/**
 * Filters that can be decided from the index alone: the caller's security groups and the hidden
 * flag. A request with any other filter scores here and has its candidates checked by SQL.
 */
export interface MemoryFilter {
  groups?: string[];
  showHidden: boolean;
}

interface TermPostings {
  ords: Int32Array;
  tf: Int32Array;
}

/** The vectors of one vectorset and dimension, with the paragraph ordinal of each. */
export interface VectorGroup {
  ords: Int32Array;
  block: VectorBlock;
  /** Sequential float32 sums of squares (cosine), computed once. */
  norms: Float32Array;
}

/** Everything a builder hands over; see SearchMemoryService for how it is read. */
export interface KbMemoryData {
  kbid: string;
  generation: string;
  /** search_stats.paragraphs and total_length (BM25's N and avgdl). */
  paragraphs: number;
  totalLength: number;
  /** Paragraph ids in ascending order, with their attributes at the same ordinal. */
  ids: string[];
  hidden: Uint8Array;
  groupSet: Int32Array;
  groupSets: string[][];
  /** search_terms.df */
  df: Map<string, number>;
  postings: Map<string, TermPostings>;
  /** postings' `length` per paragraph ordinal */
  lengths: Int32Array;
  vectors: Map<string, Map<number, VectorGroup>>;
}

export interface ScoredList {
  /** Ordinals, best first (score descending, then the order SQL breaks ties in). */
  ords: number[];
  scores: Float64Array;
}

/**
 * One knowledge box's retrieval data, as of one index generation (content.search_stats.generation):
 * BM25 postings with the KB's term statistics, the vectors of each vectorset, and the per-paragraph
 * security groups and hidden flag. Scores are computed as the SQL statements compute them
 * (query/retrievers.ts): float8 BM25 with the same constants, pgvector's float32 inner product.
 */
export class KbMemoryIndex {
  readonly bytes: number;
  private readonly idNum: Float64Array;

  constructor(readonly data: KbMemoryData) {
    this.idNum = Float64Array.from(data.ids, Number);
    let bytes = data.hidden.byteLength + data.groupSet.byteLength + data.lengths.byteLength + this.idNum.byteLength;
    bytes += data.ids.reduce((n, id) => n + 40 + id.length * 2, 0);
    for (const [term, p] of data.postings) bytes += 100 + term.length * 2 + p.ords.byteLength + p.tf.byteLength;
    bytes += data.df.size * 60;
    for (const byDim of data.vectors.values()) for (const g of byDim.values()) bytes += g.block.bytes + g.ords.byteLength + g.norms.byteLength;
    this.bytes = bytes;
  }

  get generation(): string {
    return this.data.generation;
  }

  get size(): number {
    return this.data.ids.length;
  }

  id(ord: number): string {
    return this.data.ids[ord] as string;
  }

  /** Vectors of a vectorset (any dimension): decides, like SearchContextService.vectorPopulation, exact scan or HNSW for the SQL fallback. */
  population(vectorset: string): number {
    let n = 0;
    for (const g of this.data.vectors.get(vectorset)?.values() ?? []) n += g.ords.length;
    return n;
  }

  /** `visible(ord)` for a memory filter. */
  visibility(f: MemoryFilter): (ord: number) => boolean {
    const { hidden, groupSet, groupSets } = this.data;
    const groups = f.groups && f.groups.length ? new Set(f.groups) : undefined;
    const setOk = groupSets.map((s) => !groups || s.length === 0 || s.some((g) => groups.has(g)));
    const showHidden = f.showHidden;
    return (ord) => (showHidden || hidden[ord] === 0) && setOk[groupSet[ord] as number] === true;
  }

  /**
   * BM25 of every paragraph with a query term, sorted (score descending, paragraph id ascending —
   * the SQL statement's order). Per term the weight idf·(k1+1) is computed once, from the KB's df.
   */
  bm25(terms: string[]): ScoredList {
    const { paragraphs, totalLength, df, postings, lengths } = this.data;
    const n = paragraphs;
    const c1 = BM25.k1 * (1 - BM25.b);
    const c2 = (BM25.k1 * BM25.b) / Math.max(totalLength / Math.max(paragraphs, 1), 1);
    const scores = new Float64Array(this.size);
    const seen = new Uint8Array(this.size);
    const touched: number[] = [];
    // Terms in index order (PostgreSQL reads the query's terms through the (kbid, term) keys, and
    // sums each paragraph's contributions in that order): the same additions, the same bits.
    for (const term of [...new Set(terms)].sort()) {
      const d = df.get(term);
      const p = postings.get(term);
      if (d === undefined || d <= 0 || !p) continue;
      const w = Math.log(1 + (n - d + 0.5) / (d + 0.5)) * (BM25.k1 + 1);
      const { ords, tf } = p;
      for (let i = 0; i < ords.length; i++) {
        const o = ords[i] as number;
        const f = tf[i] as number;
        if (seen[o] === 0) {
          seen[o] = 1;
          touched.push(o);
        }
        scores[o] = (scores[o] as number) + (w * f) / (f + c1 + c2 * (lengths[o] as number));
      }
    }
    // ids ascend with the ordinal: ties break by ordinal
    touched.sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b);
    return { ords: touched, scores };
  }

  /**
   * Similarity of every vector of `vectorset` with the query's dimension, sorted as the SQL
   * statement sorts (score descending, then paragraph id as text). Scores are pgvector's:
   * DOT `-(v <#> q)`, COSINE `1 - (v <=> q)`, bit for bit.
   */
  similarity(vectorset: string, vector: number[], similarity: 'COSINE' | 'DOT'): ScoredList {
    const group = this.data.vectors.get(vectorset)?.get(vector.length);
    if (!group) return { ords: [], scores: new Float64Array(0) };
    const q = queryFloat32(vector);
    const dots = group.block.dots(q);
    const scores = new Float64Array(this.size);
    const ords: number[] = new Array<number>(group.ords.length);
    const qn = similarity === 'COSINE' ? norm2(q) : 0;
    for (let i = 0; i < group.ords.length; i++) {
      const o = group.ords[i] as number;
      ords[i] = o;
      if (similarity === 'DOT') scores[o] = dots[i] as number;
      else {
        let sim = (dots[i] as number) / Math.sqrt((group.norms[i] as number) * qn);
        if (sim > 1) sim = 1;
        else if (sim < -1) sim = -1;
        scores[o] = 1 - (1 - sim);
      }
    }
    const ids = this.data.ids;
    // PostgreSQL sorts NaN above every number; ties by the id's text (the statement orders by paragraph::text).
    ords.sort((a, b) => {
      const x = scores[a] as number;
      const y = scores[b] as number;
      if (x !== y) {
        if (Number.isNaN(x)) return -1;
        if (Number.isNaN(y)) return 1;
        return y - x;
      }
      const ia = ids[a] as string;
      const ib = ids[b] as string;
      return ia < ib ? -1 : ia > ib ? 1 : 0;
    });
    return { ords, scores };
  }
}

/** `score >= min` as PostgreSQL compares float8 (NaN above everything). */
export function atLeast(score: number, min: number): boolean {
  return Number.isNaN(score) || score >= min;
}

/** The first `limit` entries of a sorted list that pass `keep` and `min`, as retriever hits. */
export function take(idx: KbMemoryIndex, list: ScoredList, limit: number, min: number, keep: (ord: number) => boolean): RetrieverHit[] {
  const out: RetrieverHit[] = [];
  for (const o of list.ords) {
    if (out.length >= limit) break;
    const s = list.scores[o] as number;
    if (!atLeast(s, min)) continue;
    if (!keep(o)) continue;
    out.push({ id: idx.id(o), score: s });
  }
  return out;
}

/** Vectors in interleaved blocks (see dot-kernel) from per-paragraph float32 arrays. */
export function vectorGroup(entries: { ord: number; v: Float32Array }[], dim: number): VectorGroup {
  entries.sort((a, b) => a.ord - b.ord);
  const block = new VectorBlock(dim, entries.length);
  const norms = new Float32Array(entries.length);
  const ords = new Int32Array(entries.length);
  entries.forEach((e, i) => {
    block.set(i, e.v);
    norms[i] = norm2(e.v);
    ords[i] = e.ord;
  });
  return { ords, block, norms };
}

export { LANES };
