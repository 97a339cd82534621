import { KbMemoryIndex, PARAGRAPH_BYTES, type AttributeKeys, type KbMemoryData } from './kb-memory-index';
import { VectorGroupBuilder, groupBytes, sendDimension } from './vector-group';

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

/**
 * `base` with a set of changes applied, as a new index (`base` is left as it was, for the
 * queries still using it): the paragraphs the changes touched that `base` holds are marked
 * dead; those that exist now are appended with their postings and vectors (a new vector group
 * per vectorset and dimension); the touched terms' df and postings are replaced; N and the total
 * length are the database's. Ordinals no longer follow ids past the full read, so ties are
 * broken by the ids themselves. Arrays per paragraph are copied (~10 ms a million); postings of
 * untouched terms and the vector groups are shared.
 */
export function applyChanges(base: KbMemoryIndex, ch: KbChanges): KbMemoryIndex {
  const d = base.data;
  const prev = d.changes;
  const keys = prev?.keys ?? keysOf(d);
  const live = prev ? base.live().pass : undefined;
  const dead: number[] = [];
  for (const id of ch.touched) {
    const o = base.ordOf(id);
    if (o !== undefined && (!live || live[o] === 1)) dead.push(o);
  }
  const n0 = base.size;
  const n = n0 + ch.rows.length;
  const hidden = extend(d.hidden, n, Uint8Array);
  const groupSet = extend(d.groupSet, n, Int32Array);
  const lengths = extend(d.lengths, n, Int32Array);
  const idNum = extend(base.idNum, n, Float64Array);
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
  let bytes = base.bytes + ch.rows.length * PARAGRAPH_BYTES;
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
    const old = base.postingsOf(t) ?? { ords: new Int32Array(0), tf: new Int32Array(0) };
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
  base.lendScratch(next);
  return next;
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
