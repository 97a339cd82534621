import { compileMatch, perParagraph, type Match, type MatchAttributes, type MatchColumns } from '../query/filter-match';
import { BM25 } from '../query/retrievers';
import { LANES, norm2, queryFloat32 } from './dot-kernel';
import { concat, pick, type Before, type Picked } from './pick';
import { groupBytes, type VectorGroup } from './vector-group';

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

export interface TermPostings {
  ords: Int32Array;
  tf: Int32Array;
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
  /**
   * The vectors of each vectorset and dimension: the full read's group first, then one group per
   * set of changes applied since (applyChanges, apply-changes.ts).
   */
  vectors: Map<string, Map<number, VectorGroup[]>>;
  /** Each paragraph's tags, field, language and resource (filter-match.ts). */
  attributes: MatchAttributes;
  columns: MatchColumns;
  /**
   * Ordinals where a run of paragraphs with the same filter attributes (tags, field, language,
   * resource, groups, hidden) starts: a filter is decided once per run.
   */
  runs: Int32Array;
  /** Set by applyChanges (apply-changes.ts): what changed since the full read. */
  changes?: AppliedChanges;
}

/** What applied change sets left on top of a full read (see applyChanges, apply-changes.ts). */
export interface AppliedChanges {
  /** Ordinals below this one are the full read's, ids ascending; those from it on were appended. */
  sorted: number;
  /** Paragraph ordinals of this index (`ids` and the typed arrays may run on: see extend). */
  size: number;
  /** Ordinals of paragraphs deleted or replaced since (never scored, never let through a mask). */
  dead: Int32Array;
  /** df and postings of the terms the changes touched (df 0: the term is gone). */
  df: Map<string, number>;
  postings: Map<string, TermPostings>;
  /** Live appended paragraphs by id. */
  tail: Map<string, number>;
  idNum: Float64Array;
  /** Distinct attribute values by key, shared (append-only) by the indexes of one full read. */
  keys: AttributeKeys;
  bytes: number;
}

/** The keys the loader interned attribute values by, so that applied changes can intern more. */
export interface AttributeKeys {
  groupSets: Map<string, number>;
  tagSets: Map<string, number>;
  fields: Map<string, number>;
  languages: Map<string, number>;
  rids: Map<string, number>;
}

/**
 * One knowledge box's retrieval data, as of one index generation (content.search_stats.generation):
 * BM25 postings with the KB's term statistics, the vectors of each vectorset, and the per-paragraph
 * security groups and hidden flag. Scores are computed as the SQL statements compute them
 * (query/retrievers.ts): float8 BM25 with the same constants, pgvector's float32 inner product.
 */
export class KbMemoryIndex {
  readonly bytes: number;
  /** Paragraph ordinals, live or not (the length of every per-paragraph array this index reads). */
  readonly size: number;
  /** Each ordinal's paragraph id as a number (read by apply-changes.ts). */
  readonly idNum: Float64Array;
  private readonly masks = new Map<string, FilterMask>();
  private scratch?: { scores: Float64Array; seen: Uint8Array };
  private liveMask?: FilterMask;

  constructor(readonly data: KbMemoryData) {
    // (`ids` may be longer: an index made from this one by applied changes appends to it)
    this.size = data.changes?.size ?? data.ids.length;
    if (data.changes) {
      this.idNum = data.changes.idNum;
      this.bytes = data.changes.bytes;
      return;
    }
    // (a plain loop: Float64Array.from with a mapping function is ~8× slower, 0.3 s at 1 M ids)
    this.idNum = new Float64Array(data.ids.length);
    for (let i = 0; i < data.ids.length; i++) this.idNum[i] = Number(data.ids[i]);
    let bytes = data.ids.length * PARAGRAPH_BYTES + data.runs.byteLength;
    const a = data.attributes;
    bytes += a.tagSets.reduce((n, set) => n + 40 + set.reduce((m, t) => m + 40 + t.length * 2, 0), 0);
    bytes += [...a.fields, ...a.languages, ...a.rids].reduce((n, v) => n + 40 + v.length * 2, 0);
    bytes += data.ids.reduce((n, id) => n + 40 + id.length * 2, 0);
    for (const [term, p] of data.postings) bytes += termBytes(term, p);
    bytes += data.df.size * 80;
    for (const byDim of data.vectors.values()) for (const groups of byDim.values()) for (const g of groups) bytes += groupBytes(g);
    this.bytes = bytes;
  }

  get generation(): string {
    return this.data.generation;
  }

  /** How much of this index came from applied changes rather than a full read (to decide when to read it again in full). */
  get fragmentation(): { dead: number; appended: number; groups: number } {
    const c = this.data.changes;
    let groups = 0;
    for (const byDim of this.data.vectors.values()) for (const g of byDim.values()) groups = Math.max(groups, g.length);
    return { dead: c?.dead.length ?? 0, appended: c ? this.size - c.sorted : 0, groups };
  }

  id(ord: number): string {
    return this.data.ids[ord] as string;
  }

  /** Vectors of a vectorset (any dimension): decides, like SearchContextService.vectorPopulation, exact scan or HNSW for the SQL fallback. */
  population(vectorset: string): number {
    let n = 0;
    for (const groups of this.data.vectors.get(vectorset)?.values() ?? []) for (const g of groups) n += g.ords.length;
    // (less the dead paragraphs, as an estimate: not all of them had a vector here)
    return Math.max(0, n - (this.data.changes?.dead.length ?? 0));
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
    const match = f.match
      ? compileMatch(f.match, this.data.attributes, this.data.columns, { holding: (terms) => this.holding(terms) })
      : () => true;
    // A keyword filter differs between paragraphs of a run: then each paragraph of a run that passes the rest is asked.
    const each = f.match ? perParagraph(f.match) : false;
    const pass = new Uint8Array(this.size);
    let count = 0;
    for (let r = 0; r < runs.length; r++) {
      const from = runs[r] as number;
      const to = r + 1 < runs.length ? (runs[r + 1] as number) : this.size;
      if ((!showHidden && hidden[from] !== 0) || setOk[groupSet[from] as number] !== true) continue;
      if (!each) {
        if (match(from)) {
          pass.fill(1, from, to);
          count += to - from;
        }
      } else {
        for (let o = from; o < to; o++) {
          if (match(o)) {
            pass[o] = 1;
            count++;
          }
        }
      }
    }
    for (const d of this.data.changes?.dead ?? []) {
      if (pass[d] === 1) {
        pass[d] = 0;
        count--;
      }
    }
    const mask = { pass, count };
    this.masks.set(key, mask);
    if (this.masks.size > MASK_CACHE) this.masks.delete(this.masks.keys().next().value as string);
    return mask;
  }

  /** 1 for each paragraph ordinal holding one of `terms` (dead ones included: masks leave them out). */
  holding(terms: string[]): Uint8Array {
    const has = new Uint8Array(this.size);
    for (const term of new Set(terms)) {
      const d = this.dfOf(term);
      const p = this.postingsOf(term);
      if (d === undefined || d <= 0 || !p) continue;
      for (const o of p.ords) has[o] = 1;
    }
    return has;
  }

  /** Every live paragraph (only differs from all of them once changes were applied). */
  live(): FilterMask {
    if (!this.liveMask) {
      const pass = new Uint8Array(this.size).fill(1);
      const dead = this.data.changes?.dead ?? new Int32Array(0);
      for (const d of dead) pass[d] = 0;
      this.liveMask = { pass, count: this.size - dead.length };
    }
    return this.liveMask;
  }

  private dfOf(term: string): number | undefined {
    const c = this.data.changes;
    return c?.df.has(term) ? c.df.get(term) : this.data.df.get(term);
  }

  postingsOf(term: string): TermPostings | undefined {
    return this.data.changes?.postings.get(term) ?? this.data.postings.get(term);
  }

  /** The live ordinal of a paragraph id, if the index holds it. */
  ordOf(id: string): number | undefined {
    const c = this.data.changes;
    const appended = c?.tail.get(id);
    if (appended !== undefined) return appended;
    const x = Number(id);
    let lo = 0;
    let hi = (c ? c.sorted : this.size) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.idNum[mid] as number;
      if (v === x) return !c || this.live().pass[mid] === 1 ? mid : undefined;
      if (v < x) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /**
   * BM25 of every paragraph with a query term (Okapi, the statement's constants; per term the
   * weight idf·(k1+1) from the KB's df), then the best `k` that pass `pred` in the statement's
   * order: score descending, paragraph id ascending. With `pass`, paragraphs outside it are not
   * scored at all.
   */
  bm25(terms: string[], k: number, pred: (ord: number, score: number) => boolean, pass?: Uint8Array): Picked {
    const { paragraphs, totalLength, lengths } = this.data;
    const n = paragraphs;
    const c1 = BM25.k1 * (1 - BM25.b);
    const c2 = (BM25.k1 * BM25.b) / Math.max(totalLength / Math.max(paragraphs, 1), 1);
    const only = pass ?? (this.data.changes ? this.live().pass : undefined);
    // Scratch arrays kept by the index (a query runs synchronously here), cleared where touched.
    // (a little larger than needed, so that the indexes made by applied changes can share it)
    const room = Math.ceil(this.size * 1.1);
    const scores = (this.scratch ??= { scores: new Float64Array(room), seen: new Uint8Array(room) }).scores;
    const seen = this.scratch.seen;
    const touched: number[] = [];
    try {
      // Terms in index order (PostgreSQL reads the query's terms through the (kbid, term) keys and
      // mostly sums a paragraph's contributions in that order).
      for (const term of [...new Set(terms)].sort()) {
        const d = this.dfOf(term);
        const p = this.postingsOf(term);
        if (d === undefined || d <= 0 || !p) continue;
        const w = Math.log(1 + (n - d + 0.5) / (d + 0.5)) * (BM25.k1 + 1);
        const { ords, tf } = p;
        for (let i = 0; i < ords.length; i++) {
          const o = ords[i] as number;
          if (only && only[o] === 0) continue;
          const f = tf[i] as number;
          if (seen[o] === 0) {
            seen[o] = 1;
            touched.push(o);
          }
          scores[o] = (scores[o] as number) + (w * f) / (f + c1 + c2 * (lengths[o] as number));
        }
      }
      const idNum = this.idNum;
      const before: Before = (a, b) => {
        const x = scores[a] as number;
        const y = scores[b] as number;
        return x > y || (x === y && (idNum[a] as number) < (idNum[b] as number));
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
  similarity(
    vectorset: string,
    vector: number[],
    similarity: 'COSINE' | 'DOT',
    k: number,
    pred: (ord: number, score: number) => boolean,
    mask?: FilterMask,
  ): Picked {
    const groups = this.data.vectors.get(vectorset)?.get(vector.length);
    if (!groups || groups.length === 0) return { hits: [], passing: 0 };
    const q = queryFloat32(vector);
    const qn = similarity === 'COSINE' ? norm2(q) : 0;
    const m = mask ?? (this.data.changes ? this.live() : undefined);
    // Every scored vector: its paragraph ordinal and score.
    const hitOrds: Int32Array[] = [];
    const hitScores: Float64Array[] = [];
    for (const group of groups) {
      const { ords, norms } = group;
      // The vectors to score, by their position in the group.
      let positions: Int32Array;
      let dots: Float32Array;
      if (m && m.count < this.size) {
        const selected = this.blocksOf(m, group);
        const pass = m.pass;
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
      const scores = new Float64Array(positions.length);
      const at = new Int32Array(positions.length);
      for (let j = 0; j < positions.length; j++) {
        const i = positions[j] as number;
        at[j] = ords[i] as number;
        if (similarity === 'DOT') scores[j] = dots[i] as number;
        else {
          let sim = (dots[i] as number) / Math.sqrt((norms[i] as number) * qn);
          if (sim > 1) sim = 1;
          else if (sim < -1) sim = -1;
          scores[j] = 1 - (1 - sim);
        }
      }
      hitOrds.push(at);
      hitScores.push(scores);
    }
    const ordOfHit = hitOrds.length === 1 ? (hitOrds[0] as Int32Array) : concat(hitOrds, Int32Array);
    const scores = hitScores.length === 1 ? (hitScores[0] as Float64Array) : concat(hitScores, Float64Array);
    const ids = this.data.ids;
    const before: Before = (a, b) => {
      const x = scores[a] as number;
      const y = scores[b] as number;
      if (x !== y) return Number.isNaN(x) ? true : Number.isNaN(y) ? false : x > y;
      return (ids[ordOfHit[a] as number] as string) < (ids[ordOfHit[b] as number] as string);
    };
    const items = new Int32Array(scores.length);
    for (let j = 0; j < items.length; j++) items[j] = j;
    const picked = pick(items, items.length, scores, k, before, (j) => pred(ordOfHit[j] as number, scores[j] as number));
    return { hits: picked.hits.map((h) => ({ ord: ordOfHit[h.ord] as number, score: h.score })), passing: picked.passing };
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

  /** Lends BM25's scratch arrays (cleared after every query) to `next`, an index made from this one, while they are large enough. */
  lendScratch(next: KbMemoryIndex): void {
    if (this.scratch && this.scratch.scores.length >= next.size) next.scratch = this.scratch;
  }
}

/** Bytes a paragraph costs in the per-paragraph arrays (hidden, groups, length, id number, four interned columns and the creation time; BM25's scratch). */
export const PARAGRAPH_BYTES = 1 + 4 + 4 + 8 + 16 + 8 + 9;

/** Per term, two typed arrays with their buffers and the map entry cost ~400 bytes besides the data (measured on SciFact). */
function termBytes(term: string, p: TermPostings): number {
  return 400 + term.length * 2 + p.ords.byteLength + p.tf.byteLength;
}

export type { Picked } from './pick';
export type { VectorGroup } from './vector-group';
