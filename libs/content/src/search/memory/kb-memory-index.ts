import { compileMatch, perParagraph, type Match, type MatchAttributes, type MatchColumns } from '../query/filter-match';
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
  /**
   * The vectors of each vectorset and dimension: the full read's group first, then one group per
   * set of changes applied since (KbMemoryIndex.applied).
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
  /** Set by KbMemoryIndex.applied: what changed since the full read. */
  changes?: AppliedChanges;
}

/** What applied change sets left on top of a full read (see KbMemoryIndex.applied). */
interface AppliedChanges {
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

/** A set of changes to apply: what the database holds now for the paragraphs the changes touched. */
export interface KbChanges {
  generation: string;
  paragraphs: number;
  totalLength: number;
  /** Every paragraph id the changes inserted, updated or deleted. */
  touched: string[];
  /** The rows of those that exist now (inserted or updated), ids ascending. */
  rows: { id: string; hidden: boolean; groups: string; tags: string; field: string; language: string; rid: string; created: number }[];
  /** Their postings: length and each term with its tf. */
  postings: Map<string, { length: number; terms: string[]; tf: number[] }>;
  /** Their vectors in pgvector's send format. */
  vectors: { id: string; vectorset: string; v: Uint8Array }[];
  /** The df now of every term the changes touched (0 or absent from search_terms: gone). */
  df: Map<string, number>;
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
function pick(
  ords: ArrayLike<number>,
  count: number,
  scores: Float64Array,
  k: number,
  before: Before,
  pred: (ord: number) => boolean,
): Picked {
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
  /** Paragraph ordinals, live or not (the length of every per-paragraph array this index reads). */
  readonly size: number;
  private readonly idNum: Float64Array;
  private readonly masks = new Map<string, FilterMask>();
  private scratch?: {
    scores: Float64Array;
    seen: Uint8Array;
    /** Per interned resource: its score, a term's normalised tf, and whether it was touched. */
    resources?: { score: Float64Array; tf: Float64Array; seen: Uint8Array };
  };
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
  private holding(terms: string[]): Uint8Array {
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
  private live(): FilterMask {
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

  private postingsOf(term: string): TermPostings | undefined {
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
   * Facets (query/facets.ts, the same counts): for each prefix, its direct children with the number
   * of resources carrying them, over the paragraphs `mask` lets through that hold one of `terms`
   * (all of them when `terms` is empty). Ordered as the statement orders them: count descending,
   * then the tag's bytes.
   */
  facets(prefixes: string[], mask: FilterMask, terms: string[]): Record<string, Record<string, number>> {
    let matching = mask.pass;
    if (terms.length > 0) {
      matching = this.holding(terms);
      for (let o = 0; o < this.size; o++) matching[o] &= mask.pass[o] as number;
    }
    const { tagSet, rid } = this.data.columns;
    const tagSets = this.data.attributes.tagSets;
    const clean = prefixes.map((prefix) => prefix.replace(/\/+$/, ''));
    const counted = clean.map(() => new Map<string, Set<number>>());
    // Children per tag set and prefix, worked out once per tag set.
    const children = new Map<number, string[][]>();
    let lastSet = -1;
    let lastRid = -1;
    for (let o = 0; o < this.size; o++) {
      if (matching[o] !== 1) continue;
      const set = tagSet[o] as number;
      const r = rid[o] as number;
      if (set === lastSet && r === lastRid) continue; // a resource's paragraphs mostly come together
      lastSet = set;
      lastRid = r;
      let perPrefix = children.get(set);
      if (!perPrefix) {
        const tags = tagSets[set] ?? [];
        perPrefix = clean.map((c) => {
          const below = `${c}/`;
          return [...new Set(tags.filter((t) => t.startsWith(below)).map((t) => below + (t.slice(below.length).split('/')[0] as string)))];
        });
        children.set(set, perPrefix);
      }
      for (let i = 0; i < clean.length; i++) {
        for (const child of perPrefix[i] as string[]) {
          const rids = (counted[i] as Map<string, Set<number>>).get(child);
          if (rids) rids.add(r);
          else (counted[i] as Map<string, Set<number>>).set(child, new Set([r]));
        }
      }
    }
    const out: Record<string, Record<string, number>> = {};
    prefixes.forEach((prefix, i) => {
      const rows = [...(counted[i] as Map<string, Set<number>>)].map(([tag, rids]) => [tag, rids.size] as const);
      rows.sort((a, b) => b[1] - a[1] || byteOrder(a[0], b[0]));
      out[prefix] = Object.fromEntries(rows);
    });
    return out;
  }

  /** The distinct tags of the paragraphs `mask` lets through that pass `test`, in byte order, at most `limit`. */
  tags(mask: FilterMask, test: (tag: string) => boolean, limit: number): string[] {
    const { tagSet } = this.data.columns;
    const seenSets = new Set<number>();
    let last = -1;
    for (let o = 0; o < this.size; o++) {
      if (mask.pass[o] !== 1) continue;
      const set = tagSet[o] as number;
      if (set === last) continue;
      last = set;
      seenSets.add(set);
    }
    const found = new Set<string>();
    for (const set of seenSets) for (const t of this.data.attributes.tagSets[set] ?? []) if (!found.has(t) && test(t)) found.add(t);
    return [...found].sort(byteOrder).slice(0, limit);
  }

  /**
   * BM25 of every paragraph with a query term, with its resource's evidence (keywordSearch in
   * query/retrievers.ts: the statement's constants, per term the weight idf·(k1+1) from the KB's
   * df; (1 − λ)·paragraph + λ·resource), then the best `k` that pass `pred` in the statement's
   * order: score descending, paragraph id ascending. With `pass`, only paragraphs inside it are
   * picked; every live paragraph is scored, as a resource's score reads all of its paragraphs.
   */
  bm25(terms: string[], k: number, pred: (ord: number, score: number) => boolean, pass?: Uint8Array): Picked {
    const { paragraphs, totalLength, lengths } = this.data;
    const rid = this.data.columns.rid;
    const n = paragraphs;
    const { k1, b, resource: lambda } = BM25;
    const c1 = k1 * (1 - b);
    const c2 = (k1 * b) / Math.max(totalLength / Math.max(paragraphs, 1), 1);
    const live = this.data.changes ? this.live().pass : undefined;
    // Scratch arrays kept by the index (a query runs synchronously here), cleared where touched.
    // (a little larger than needed, so that the indexes made by applied changes can share it)
    const room = Math.ceil(this.size * 1.1);
    const scratch = (this.scratch ??= { scores: new Float64Array(room), seen: new Uint8Array(room) });
    const { scores, seen } = scratch;
    const rids = this.data.attributes.rids.length;
    if (!scratch.resources || scratch.resources.score.length < rids) {
      const r = Math.ceil(rids * 1.1) + 1;
      scratch.resources = { score: new Float64Array(r), tf: new Float64Array(r), seen: new Uint8Array(r) };
    }
    const res = scratch.resources;
    const touched: number[] = [];
    const touchedResources: number[] = [];
    const termResources: number[] = [];
    try {
      // Terms in index order (PostgreSQL reads the query's terms through the (kbid, term) keys and
      // mostly sums a paragraph's contributions in that order).
      for (const term of [...new Set(terms)].sort()) {
        const d = this.dfOf(term);
        const p = this.postingsOf(term);
        if (d === undefined || d <= 0 || !p) continue;
        const w = Math.log(1 + (n - d + 0.5) / (d + 0.5)) * (k1 + 1);
        const { ords, tf } = p;
        for (let i = 0; i < ords.length; i++) {
          const o = ords[i] as number;
          if (live && live[o] === 0) continue;
          const f = tf[i] as number;
          const len = lengths[o] as number;
          if (seen[o] === 0) {
            seen[o] = 1;
            touched.push(o);
          }
          scores[o] = (scores[o] as number) + (w * f) / (f + c1 + c2 * len);
          // the resource's length-normalised tf of this term (> 0 once touched)
          const r = rid[o] as number;
          if (res.tf[r] === 0) termResources.push(r);
          res.tf[r] = (res.tf[r] as number) + (k1 * f) / (c1 + c2 * len);
        }
        for (const r of termResources) {
          const t = res.tf[r] as number;
          res.tf[r] = 0;
          res.score[r] = (res.score[r] as number) + (w * t) / (k1 + t);
          if (res.seen[r] === 0) {
            res.seen[r] = 1;
            touchedResources.push(r);
          }
        }
        termResources.length = 0;
      }
      for (const o of touched) scores[o] = (1 - lambda) * (scores[o] as number) + lambda * (res.score[rid[o] as number] as number);
      const idNum = this.idNum;
      const before: Before = (a, b) => {
        const x = scores[a] as number;
        const y = scores[b] as number;
        return x > y || (x === y && (idNum[a] as number) < (idNum[b] as number));
      };
      return pick(touched, touched.length, scores, k, before, (o) => (!pass || pass[o] === 1) && pred(o, scores[o] as number));
    } finally {
      for (const o of touched) {
        scores[o] = 0;
        seen[o] = 0;
      }
      for (const r of touchedResources) {
        res.score[r] = 0;
        res.seen[r] = 0;
      }
      for (const r of termResources) res.tf[r] = 0;
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

  /**
   * This index with a set of changes applied, as a new index (this one is left as it was, for the
   * queries still using it): the paragraphs the changes touched that this index holds are marked
   * dead; those that exist now are appended with their postings and vectors (a new vector group
   * per vectorset and dimension); the touched terms' df and postings are replaced; N and the total
   * length are the database's. Ordinals no longer follow ids past the full read, so ties are
   * broken by the ids themselves. Arrays per paragraph are copied (~10 ms a million); postings of
   * untouched terms and the vector groups are shared.
   */
  applied(ch: KbChanges): KbMemoryIndex {
    const d = this.data;
    const prev = d.changes;
    const keys = prev?.keys ?? keysOf(d);
    const live = prev ? this.live().pass : undefined;
    const dead: number[] = [];
    for (const id of ch.touched) {
      const o = this.ordOf(id);
      if (o !== undefined && (!live || live[o] === 1)) dead.push(o);
    }
    const n0 = this.size;
    const n = n0 + ch.rows.length;
    const hidden = extend(d.hidden, n, Uint8Array);
    const groupSet = extend(d.groupSet, n, Int32Array);
    const lengths = extend(d.lengths, n, Int32Array);
    const idNum = extend(this.idNum, n, Float64Array);
    const columns = {
      tagSet: extend(d.columns.tagSet, n, Int32Array),
      field: extend(d.columns.field, n, Int32Array),
      language: extend(d.columns.language, n, Int32Array),
      rid: extend(d.columns.rid, n, Int32Array),
      created: extend(d.columns.created, n, Float64Array),
    };
    // Shared as the typed arrays are: appended to when nothing else was, copied otherwise.
    const ids = d.ids.length === n0 ? d.ids : d.ids.slice(0, n0);
    for (const r of ch.rows) ids.push(r.id);
    const attributes = d.attributes as { tagSets: string[][]; fields: string[]; languages: string[]; rids: string[] };
    const groupSets = d.groupSets;
    let bytes = this.bytes + ch.rows.length * PARAGRAPH_BYTES;
    const intern = <T>(map: Map<string, number>, values: T[], key: string, value: () => T): number => {
      let i = map.get(key);
      if (i === undefined) {
        i = values.length;
        values.push(value());
        map.set(key, i);
        bytes += 40 + key.length * 2;
      }
      return i;
    };
    const runs: number[] = [];
    const tail = new Map(prev?.tail ?? []);
    for (const o of dead) if (o >= (prev?.sorted ?? n0)) tail.delete(ids[o] as string);
    ch.rows.forEach((r, i) => {
      const o = n0 + i;
      bytes += 40 + r.id.length * 2;
      idNum[o] = Number(r.id);
      tail.set(r.id, o);
      hidden[o] = r.hidden ? 1 : 0;
      groupSet[o] = intern(keys.groupSets, groupSets, r.groups, () => JSON.parse(r.groups) as string[]);
      columns.tagSet[o] = intern(keys.tagSets, attributes.tagSets, r.tags, () => JSON.parse(r.tags) as string[]);
      columns.field[o] = intern(keys.fields, attributes.fields, r.field, () => r.field);
      columns.language[o] = intern(keys.languages, attributes.languages, r.language, () => r.language);
      columns.rid[o] = intern(keys.rids, attributes.rids, r.rid, () => r.rid);
      columns.created[o] = r.created;
      lengths[o] = ch.postings.get(r.id)?.length ?? 0;
      const p = o - 1;
      const same =
        i > 0 &&
        hidden[o] === hidden[p] &&
        groupSet[o] === groupSet[p] &&
        columns.tagSet[o] === columns.tagSet[p] &&
        columns.field[o] === columns.field[p] &&
        columns.language[o] === columns.language[p] &&
        columns.rid[o] === columns.rid[p] &&
        columns.created[o] === columns.created[p];
      if (!same) runs.push(o);
    });
    const allRuns = extend(d.runs, d.runs.length + runs.length, Int32Array);
    allRuns.set(runs, d.runs.length);
    bytes += runs.length * 4;

    // Postings: the appended paragraphs' entries after each term's existing ones.
    const added = new Map<string, { ords: number[]; tf: number[] }>();
    ch.rows.forEach((r, i) => {
      const p = ch.postings.get(r.id);
      if (!p) return;
      p.terms.forEach((t, j) => {
        let a = added.get(t);
        if (!a) added.set(t, (a = { ords: [], tf: [] }));
        a.ords.push(n0 + i);
        a.tf.push(p.tf[j] as number);
      });
    });
    const postings = new Map(prev?.postings ?? []);
    for (const [t, a] of added) {
      // Appended in place as the per-paragraph arrays are (see extend): copying every touched
      // term's postings for each update allocated tens of megabytes a write at 100 k paragraphs,
      // and V8 then collected garbage in full every few writes (~100 ms).
      const old = this.postingsOf(t) ?? { ords: new Int32Array(0), tf: new Int32Array(0) };
      const n = old.ords.length;
      const ords = extend(old.ords, n + a.ords.length, Int32Array);
      const tf = extend(old.tf, n + a.tf.length, Int32Array);
      ords.set(a.ords, n);
      tf.set(a.tf, n);
      if (ords.buffer !== old.ords.buffer) bytes += 400 + ords.buffer.byteLength + tf.buffer.byteLength;
      postings.set(t, { ords, tf });
    }
    const df = new Map(prev?.df ?? []);
    for (const [t, v] of ch.df) {
      if (!df.has(t)) bytes += 80 + t.length * 2;
      df.set(t, v);
    }

    // Vectors: one new group per vectorset and dimension, in ordinal order.
    const vectors = new Map([...d.vectors].map(([vs, byDim]) => [vs, new Map([...byDim].map(([dim, groups]) => [dim, [...groups]]))]));
    const byGroup = new Map<string, { vs: string; dim: number; items: { ord: number; v: Uint8Array }[] }>();
    const ordOfRow = new Map(ch.rows.map((r, i) => [r.id, n0 + i]));
    for (const x of ch.vectors) {
      const ord = ordOfRow.get(x.id);
      if (ord === undefined) continue;
      const dim = sendDimension(x.v);
      const key = `${dim} ${x.vectorset}`;
      let g = byGroup.get(key);
      if (!g) byGroup.set(key, (g = { vs: x.vectorset, dim, items: [] }));
      g.items.push({ ord, v: x.v });
    }
    for (const { vs, dim, items } of byGroup.values()) {
      items.sort((a, b) => a.ord - b.ord);
      let byDim = vectors.get(vs);
      if (!byDim) vectors.set(vs, (byDim = new Map()));
      const groups = byDim.get(dim) ?? [];
      // The last appended group, while small, is made again with the new vectors (never the full
      // read's): groups stay few, and a small one is scanned by the JavaScript loop (the same
      // bits) — a WebAssembly memory per update would make V8 collect garbage in full every few.
      const last = groups.length > 1 ? groups[groups.length - 1] : undefined;
      const merged = last && last.ords.length < WASM_GROUP_MIN ? last : undefined;
      const total = (merged?.ords.length ?? 0) + items.length;
      const builder = new VectorGroupBuilder(dim, total, { javascript: total < WASM_GROUP_MIN });
      if (merged) {
        const v = new Float32Array(dim);
        for (let i = 0; i < merged.ords.length; i++) builder.add(merged.ords[i] as number, merged.block.get(i, v));
      }
      for (const it of items) builder.addSend(it.ord, it.v);
      const group = builder.done();
      bytes += groupBytes(group) - (merged ? groupBytes(merged) : 0);
      byDim.set(dim, merged ? [...groups.slice(0, -1), group] : [...groups, group]);
    }

    const allDead = new Int32Array((prev?.dead.length ?? 0) + dead.length);
    if (prev) allDead.set(prev.dead);
    allDead.set(dead, prev?.dead.length ?? 0);
    const next = new KbMemoryIndex({
      ...d,
      generation: ch.generation,
      paragraphs: ch.paragraphs,
      totalLength: ch.totalLength,
      ids,
      hidden,
      groupSet,
      lengths,
      columns,
      vectors,
      runs: allRuns,
      changes: { sorted: prev?.sorted ?? n0, size: n, dead: allDead, df, postings, tail, idNum, keys, bytes },
    });
    // BM25's scratch is cleared after every query: the next index uses it while it is large enough.
    if (this.scratch && this.scratch.scores.length >= n) next.scratch = this.scratch;
    return next;
  }
}

/**
 * Strings in the order of their UTF-8 bytes (code points): how the statements sort tags (`COLLATE
 * "C"`), whatever the database's own collation.
 */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** How much of each typed array's buffer the indexes made from one another use at most (see extend). */
const USED = new WeakMap<ArrayBufferLike, number>();

/**
 * `a` lengthened to `n` entries (the new ones to be written by the caller): a longer view of the
 * same buffer when nothing was appended after `a` yet and there is room — the index `a` belongs to
 * keeps reading its own length of it — else a copy into a buffer with a quarter more room.
 */
function extend<T extends Int32Array | Uint8Array | Float64Array>(
  a: T,
  n: number,
  make: { new (length: number): T; new (buffer: ArrayBufferLike, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
): T {
  if (
    a.byteOffset === 0 &&
    (USED.get(a.buffer) ?? a.buffer.byteLength / make.BYTES_PER_ELEMENT) === a.length &&
    a.buffer.byteLength >= n * make.BYTES_PER_ELEMENT
  ) {
    const view = new make(a.buffer, 0, n);
    USED.set(a.buffer, n);
    return view;
  }
  const b = new make(Math.ceil(n * 1.25) + 16);
  b.set(a);
  USED.set(b.buffer, n);
  return new make(b.buffer, 0, n);
}

/** Vectors from which an appended group gets its own WebAssembly memory and SIMD kernel. */
const WASM_GROUP_MIN = 1_024;

/** Bytes a paragraph costs in the per-paragraph arrays (hidden, groups, length, id number, four interned columns and the creation time; BM25's scratch). */
const PARAGRAPH_BYTES = 1 + 4 + 4 + 8 + 16 + 8 + 9;

/** Per term, two typed arrays with their buffers and the map entry cost ~400 bytes besides the data (measured on SciFact). */
function termBytes(term: string, p: TermPostings): number {
  return 400 + term.length * 2 + p.ords.byteLength + p.tf.byteLength;
}

function groupBytes(g: VectorGroup): number {
  return g.block.bytes + g.ords.byteLength + g.norms.byteLength;
}

/** The interning keys of a full read's attribute values (as the loader interned them). */
function keysOf(d: KbMemoryData): AttributeKeys {
  const by = <T>(values: readonly T[], key: (v: T) => string) => new Map(values.map((v, i) => [key(v), i] as const));
  return {
    groupSets: by(d.groupSets, (v) => JSON.stringify(v)),
    tagSets: by(d.attributes.tagSets, (v) => JSON.stringify(v)),
    fields: by(d.attributes.fields, (v) => v),
    languages: by(d.attributes.languages, (v) => v),
    rids: by(d.attributes.rids, (v) => v),
  };
}

/** The parts one after the other, in one array. */
function concat<T extends Int32Array | Float64Array>(parts: T[], make: new (n: number) => T): T {
  const out = new make(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `score >= min` as PostgreSQL compares float8 (NaN above everything). */
export function atLeast(score: number, min: number): boolean {
  return Number.isNaN(score) || score >= min;
}

/**
 * One vector group written as its vectors arrive, in ascending ordinal order, straight into its
 * interleaved block (see dot-kernel): a KB's million vectors are never held as a million arrays
 * next to the block. Sized up front (the KB's paragraph count bounds a vectorset's vectors), grown
 * by half when that was too few, and copied to its size at the end if much of it is unused.
 */
export class VectorGroupBuilder {
  private block: VectorBlock;
  private ords: Int32Array;
  private norms: Float32Array;
  private n = 0;
  private readonly scratch: Float32Array;

  constructor(
    readonly dim: number,
    capacity: number,
    o: { javascript?: boolean } = {},
  ) {
    const c = Math.max(LANES, capacity);
    this.block = new VectorBlock(dim, c, o);
    this.ords = new Int32Array(c);
    this.norms = new Float32Array(c);
    this.scratch = new Float32Array(dim);
  }

  get count(): number {
    return this.n;
  }

  /** Adds the vector of paragraph `ord` (float32 values, `dim` of them); ordinals must ascend. */
  add(ord: number, v: ArrayLike<number>): void {
    if (v.length !== this.dim) throw new RangeError(`a vector of ${v.length} in a group of ${this.dim}`);
    if (this.n > 0 && ord <= (this.ords[this.n - 1] as number)) throw new RangeError(`ordinal ${ord} after ${this.ords[this.n - 1]}`);
    if (this.n === this.block.capacity) this.grow(Math.ceil(this.n * 1.5));
    this.block.set(this.n, v);
    this.norms[this.n] = norm2(v);
    this.ords[this.n] = ord;
    this.n++;
  }

  /** Adds a vector in pgvector's binary send format (see vectorFromSend) without an array per vector. */
  addSend(ord: number, b: Uint8Array): void {
    this.add(ord, vectorFromSend(b, this.scratch));
  }

  done(): VectorGroup {
    this.block.truncate(this.n);
    if (this.n < this.block.capacity * 0.9) this.grow(this.n);
    return { ords: this.ords.slice(0, this.n), block: this.block, norms: this.norms.slice(0, this.n) };
  }

  private grow(capacity: number): void {
    this.block.truncate(this.n);
    this.block = this.block.resized(Math.max(capacity, 1));
    const ords = new Int32Array(capacity);
    ords.set(this.ords.subarray(0, this.n));
    this.ords = ords;
    const norms = new Float32Array(capacity);
    norms.set(this.norms.subarray(0, this.n));
    this.norms = norms;
  }
}

/**
 * A vector from pgvector's binary send format (int16 dimensions, int16 unused, big-endian float4s),
 * into `into` when given (it must have the vector's dimensions).
 */
export function vectorFromSend(b: Uint8Array, into?: Float32Array): Float32Array {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dim = sendDimension(b);
  if (into && into.length !== dim) throw new RangeError(`a vector of ${dim} read into ${into.length}`);
  const v = into ?? new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}

/** The dimensions of a vector in pgvector's binary send format (its leading int16). */
export function sendDimension(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint16(0);
}

export { LANES };
