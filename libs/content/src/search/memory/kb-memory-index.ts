import { compileMatch, type Match, type MatchAttributes, type MatchColumns } from '../query/filter-match';
import { BM25 } from '../query/retrievers';
import { LANES, VectorBlock, norm2, queryFloat32 } from './dot-kernel';

/**
 * Filters that can be decided from the index alone: the caller's security groups, the hidden flag
 * and the request's filters when FilterCompiler could write them as a Match (tags, fields,
 * languages, resources). A request with any other filter scores here and has its candidates
 * checked by SQL.
 */
export interface MemoryFilter {
  groups?: string[];
  showHidden: boolean;
  match?: Match;
}

/** The paragraphs a MemoryFilter lets through: `pass[ord]` is 1 for each, `count` of them. */
export interface FilterMask {
  pass: Uint8Array;
  count: number;
  /** Per vector group, its blocks of LANES holding a passing paragraph (filled as needed). */
  blocks?: WeakMap<VectorGroup, Uint8Array>;
}

/** Masks kept per index (the same filter is often asked again: a label, a user's groups). */
const MASK_CACHE = 16;

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
  /** Each paragraph's tags, field, language and resource (filter-match.ts). */
  attributes: MatchAttributes;
  columns: MatchColumns;
  /**
   * Ordinals where a run of paragraphs with the same filter attributes (tags, field, language,
   * resource, groups, hidden) starts: a filter is decided once per run.
   */
  runs: Int32Array;
}

/** Hits picked from a scored list: ordinals with their scores, best first. */
export interface Picked {
  hits: { ord: number; score: number }[];
  /** How many entries passed the predicate (all of them, not only those picked). */
  passing: number;
}

/** `a` ranks before `b` (the SQL statement's ORDER BY). */
type Before = (a: number, b: number) => boolean;

/**
 * The best `k` ordinals of `ords` that pass `pred`, in order, without sorting them all: a heap
 * holds the k best so far (its root the worst of them).
 */
function pick(ords: ArrayLike<number>, count: number, scores: Float64Array, k: number, before: Before, pred: (ord: number) => boolean): Picked {
  const heap: number[] = [];
  let passing = 0;
  // root = the entry ranked last among the kept
  const worse = (a: number, b: number) => before(b, a);
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i] as number, heap[parent] as number)) break;
      [heap[i], heap[parent]] = [heap[parent] as number, heap[i] as number];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l] as number, heap[m] as number)) m = l;
      if (r < heap.length && worse(heap[r] as number, heap[m] as number)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
      i = m;
    }
  };
  for (let i = 0; i < count; i++) {
    const o = ords[i] as number;
    if (!pred(o)) continue;
    passing++;
    if (k <= 0) continue;
    if (heap.length < k) {
      heap.push(o);
      up(heap.length - 1);
    } else if (before(o, heap[0] as number)) {
      heap[0] = o;
      down(0);
    }
  }
  heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  return { hits: heap.map((o) => ({ ord: o, score: scores[o] as number })), passing };
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
  private readonly masks = new Map<string, FilterMask>();
  private scratch?: { scores: Float64Array; seen: Uint8Array };

  constructor(readonly data: KbMemoryData) {
    this.idNum = Float64Array.from(data.ids, Number);
    // (+ 9 bytes a paragraph: BM25's scratch scores and marks, made at the first query)
    let bytes = data.hidden.byteLength + data.groupSet.byteLength + data.lengths.byteLength + this.idNum.byteLength + data.runs.byteLength + data.ids.length * 9;
    const c = data.columns;
    bytes += c.tagSet.byteLength + c.field.byteLength + c.language.byteLength + c.rid.byteLength;
    const a = data.attributes;
    bytes += a.tagSets.reduce((n, set) => n + 40 + set.reduce((m, t) => m + 40 + t.length * 2, 0), 0);
    bytes += [...a.fields, ...a.languages, ...a.rids].reduce((n, v) => n + 40 + v.length * 2, 0);
    bytes += data.ids.reduce((n, id) => n + 40 + id.length * 2, 0);
    // Per term, two typed arrays with their buffers and the map entry cost ~400 bytes besides the
    // data (measured on SciFact: 29 k terms, 511 k postings, ~30 MB live in all).
    for (const [term, p] of data.postings) bytes += 400 + term.length * 2 + p.ords.byteLength + p.tf.byteLength;
    bytes += data.df.size * 80;
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

  /** The paragraphs a memory filter lets through (decided once per run of like paragraphs; recent masks kept). */
  mask(f: MemoryFilter): FilterMask {
    const key = JSON.stringify([f.groups ?? null, f.showHidden, f.match ?? null]);
    const cached = this.masks.get(key);
    if (cached) {
      this.masks.delete(key);
      this.masks.set(key, cached);
      return cached;
    }
    const { hidden, groupSet, groupSets, runs } = this.data;
    const groups = f.groups && f.groups.length ? new Set(f.groups) : undefined;
    const setOk = groupSets.map((s) => !groups || s.length === 0 || s.some((g) => groups.has(g)));
    const showHidden = f.showHidden;
    const match = f.match ? compileMatch(f.match, this.data.attributes, this.data.columns) : () => true;
    const pass = new Uint8Array(this.size);
    let count = 0;
    for (let r = 0; r < runs.length; r++) {
      const from = runs[r] as number;
      const to = r + 1 < runs.length ? (runs[r + 1] as number) : this.size;
      if ((showHidden || hidden[from] === 0) && setOk[groupSet[from] as number] === true && match(from)) {
        pass.fill(1, from, to);
        count += to - from;
      }
    }
    const mask = { pass, count };
    this.masks.set(key, mask);
    if (this.masks.size > MASK_CACHE) this.masks.delete(this.masks.keys().next().value as string);
    return mask;
  }

  /**
   * BM25 of every paragraph with a query term (Okapi, the statement's constants; per term the
   * weight idf·(k1+1) from the KB's df), then the best `k` that pass `pred` in the statement's
   * order: score descending, paragraph id ascending (ids ascend with the ordinal). With `pass`,
   * paragraphs outside it are not scored at all.
   */
  bm25(terms: string[], k: number, pred: (ord: number, score: number) => boolean, pass?: Uint8Array): Picked {
    const { paragraphs, totalLength, df, postings, lengths } = this.data;
    const n = paragraphs;
    const c1 = BM25.k1 * (1 - BM25.b);
    const c2 = (BM25.k1 * BM25.b) / Math.max(totalLength / Math.max(paragraphs, 1), 1);
    // Scratch arrays kept by the index (a query runs synchronously here), cleared where touched.
    const scores = (this.scratch ??= { scores: new Float64Array(this.size), seen: new Uint8Array(this.size) }).scores;
    const seen = this.scratch.seen;
    const touched: number[] = [];
    try {
      // Terms in index order (PostgreSQL reads the query's terms through the (kbid, term) keys and
      // mostly sums a paragraph's contributions in that order).
      for (const term of [...new Set(terms)].sort()) {
        const d = df.get(term);
        const p = postings.get(term);
        if (d === undefined || d <= 0 || !p) continue;
        const w = Math.log(1 + (n - d + 0.5) / (d + 0.5)) * (BM25.k1 + 1);
        const { ords, tf } = p;
        for (let i = 0; i < ords.length; i++) {
          const o = ords[i] as number;
          if (pass && pass[o] === 0) continue;
          const f = tf[i] as number;
          if (seen[o] === 0) {
            seen[o] = 1;
            touched.push(o);
          }
          scores[o] = (scores[o] as number) + (w * f) / (f + c1 + c2 * (lengths[o] as number));
        }
      }
      const before: Before = (a, b) => {
        const x = scores[a] as number;
        const y = scores[b] as number;
        return x > y || (x === y && a < b);
      };
      return pick(touched, touched.length, scores, k, before, (o) => pred(o, scores[o] as number));
    } finally {
      for (const o of touched) {
        scores[o] = 0;
        seen[o] = 0;
      }
    }
  }

  /**
   * Similarity of every vector of `vectorset` with the query's dimension — pgvector's, bit for bit:
   * DOT `-(v <#> q)`, COSINE `1 - (v <=> q)` — then the best `k` that pass `pred`, in the
   * statement's order: score descending (NaN first, as PostgreSQL sorts it), then the paragraph id
   * as text (the statement orders by `paragraph::text`). With a mask, only the vectors of the
   * paragraphs it lets through are scored, and only their blocks of LANES are read.
   */
  similarity(vectorset: string, vector: number[], similarity: 'COSINE' | 'DOT', k: number, pred: (ord: number, score: number) => boolean, mask?: FilterMask): Picked {
    const group = this.data.vectors.get(vectorset)?.get(vector.length);
    if (!group) return { hits: [], passing: 0 };
    const q = queryFloat32(vector);
    const { ords, norms } = group;
    // The vectors to score, by their position in the group.
    let positions: Int32Array;
    let dots: Float32Array;
    if (mask && mask.count < this.size) {
      const selected = this.blocksOf(mask, group);
      const pass = mask.pass;
      const list: number[] = [];
      for (let g = 0; g < selected.length; g++) {
        if (selected[g] === 0) continue;
        const end = Math.min((g + 1) * LANES, ords.length);
        for (let i = g * LANES; i < end; i++) if (pass[ords[i] as number] === 1) list.push(i);
      }
      positions = Int32Array.from(list);
      dots = group.block.dotsWhere(q, selected);
    } else {
      positions = new Int32Array(ords.length);
      for (let i = 0; i < positions.length; i++) positions[i] = i;
      dots = group.block.dots(q);
    }
    // scores and candidates by index into `positions`
    const scores = new Float64Array(positions.length);
    const qn = similarity === 'COSINE' ? norm2(q) : 0;
    for (let j = 0; j < positions.length; j++) {
      const i = positions[j] as number;
      if (similarity === 'DOT') scores[j] = dots[i] as number;
      else {
        let sim = (dots[i] as number) / Math.sqrt((norms[i] as number) * qn);
        if (sim > 1) sim = 1;
        else if (sim < -1) sim = -1;
        scores[j] = 1 - (1 - sim);
      }
    }
    const ids = this.data.ids;
    const ordAt = (j: number) => ords[positions[j] as number] as number;
    const before: Before = (a, b) => {
      const x = scores[a] as number;
      const y = scores[b] as number;
      if (x !== y) return Number.isNaN(x) ? true : Number.isNaN(y) ? false : x > y;
      return (ids[ordAt(a)] as string) < (ids[ordAt(b)] as string);
    };
    const items = new Int32Array(positions.length);
    for (let j = 0; j < items.length; j++) items[j] = j;
    const picked = pick(items, items.length, scores, k, before, (j) => pred(ordAt(j), scores[j] as number));
    return { hits: picked.hits.map((h) => ({ ord: ordAt(h.ord), score: h.score })), passing: picked.passing };
  }

  /** The blocks of LANES vectors of `group` that hold a paragraph `mask` lets through (kept with the mask). */
  private blocksOf(mask: FilterMask, group: VectorGroup): Uint8Array {
    const known = (mask.blocks ??= new WeakMap()).get(group);
    if (known) return known;
    const selected = new Uint8Array(group.block.groups);
    for (let i = 0; i < group.ords.length; i++) if (mask.pass[group.ords[i] as number] === 1) selected[Math.floor(i / LANES)] = 1;
    mask.blocks.set(group, selected);
    return selected;
  }
}

/** `score >= min` as PostgreSQL compares float8 (NaN above everything). */
export function atLeast(score: number, min: number): boolean {
  return Number.isNaN(score) || score >= min;
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
