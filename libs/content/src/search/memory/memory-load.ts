import { KbMemoryIndex, type KbMemoryData } from './kb-memory-index';
import {
  CHUNK,
  PARAGRAPH_COLUMNS,
  POSTINGS_COLUMNS,
  VECTOR_COLUMNS,
  readChanges,
  readStats,
  type IndexReads,
  type RowQuery,
} from './memory-changes';
import { VectorGroupBuilder, sendDimension } from './vector-group';

/** Longest run of work a build does before letting queries through (when it is not waiting on SQL). */
const YIELD_AFTER_MS = 10;

/**
 * Reads a KB's index in short statements (queries interleave with them on the embedded
 * database). The generation is read before and after: if it changed, writes committed in between,
 * and the change log from the first generation brings what was read up to date; only when that
 * is not possible (see readChanges) is the result thrown away ('changed').
 */
export async function readIndex(reads: IndexReads, kbid: string): Promise<KbMemoryIndex | 'changed' | 'gone' | { tooLarge: string }> {
  const q: RowQuery = (sql, params) => reads.ds.query(sql, params) as Promise<Record<string, unknown>[]>;
  const stats = await readStats(q, kbid);
  if (!stats) return 'gone';
  const generation = stats.generation;
  // The postings are at most total_length entries of 8 bytes: a bound known before reading any.
  if (stats.paragraphs > reads.maxParagraphs || stats.totalLength * 8 > reads.budgetBytes) return { tooLarge: generation };

  const ids: string[] = [];
  const hidden = new Growable(Uint8Array);
  const groupSet = new Growable(Int32Array);
  const groupSets = new Interner(parseList);
  groupSets.intern('[]');
  const lengths = new Growable(Int32Array);
  const tagSet = new Growable(Int32Array);
  const tagSets = new Interner(parseList);
  const field = new Growable(Int32Array);
  const fields = new Interner(itself);
  const language = new Growable(Int32Array);
  const languages = new Interner(itself);
  const rid = new Growable(Int32Array);
  const rids = new Interner(itself);
  const created = new Growable(Float64Array);
  const runs = new Growable(Int32Array);
  const post = new Map<string, { ords: Growable<Int32Array>; tf: Growable<Int32Array> }>();
  const vecs = new Map<string, Map<number, VectorGroupBuilder>>();
  // A vectorset has at most one vector per paragraph: the KB's paragraph count sizes each group.
  const vectorCapacity = Math.max(1, stats.paragraphs);
  let vectorBytes = 0;
  let after = '0';
  for (;;) {
    if (reads.closed()) return 'changed';
    const rows = await q(
      // (the output column is not named id: ORDER BY id would then sort the text)
      `SELECT ${PARAGRAPH_COLUMNS}
         FROM content.search_paragraphs WHERE kbid = $1 AND id > $2::bigint ORDER BY id LIMIT ${CHUNK}`,
      [kbid, after],
    );
    if (rows.length === 0) break;
    const first = ids.length;
    const ordOf = new Map<string, number>();
    for (const r of rows) {
      const id = r['pid'] as string;
      const ord = ids.length;
      ordOf.set(id, ord);
      ids.push(id);
      hidden.push(r['hidden'] ? 1 : 0);
      const g = r['groups'] as string;
      groupSet.push(groupSets.intern(g));
      const t = r['tags'] as string;
      tagSet.push(tagSets.intern(t));
      field.push(fields.intern(r['field'] as string));
      language.push(languages.intern(r['language'] as string));
      rid.push(rids.intern(r['rid'] as string));
      created.push(r['created'] as number);
      lengths.push(0);
      // a new run when any filter attribute differs from the previous paragraph's
      const p = ord - 1;
      if (
        ord === 0 ||
        hidden.at(ord) !== hidden.at(p) ||
        groupSet.at(ord) !== groupSet.at(p) ||
        tagSet.at(ord) !== tagSet.at(p) ||
        field.at(ord) !== field.at(p) ||
        language.at(ord) !== language.at(p) ||
        rid.at(ord) !== rid.at(p) ||
        created.at(ord) !== created.at(p)
      )
        runs.push(ord);
    }
    const lo = ids[first] as string;
    after = ids[ids.length - 1] as string;
    const postings = await q(
      `SELECT ${POSTINGS_COLUMNS}
         FROM content.search_postings WHERE kbid = $1 AND paragraph BETWEEN $2::bigint AND $3::bigint GROUP BY paragraph`,
      [kbid, lo, after],
    );
    for (const r of postings) {
      const ord = ordOf.get(r['id'] as string);
      if (ord === undefined) continue;
      lengths.set(ord, r['length'] as number);
      const terms = JSON.parse(r['terms'] as string) as string[];
      const tf = JSON.parse(r['tf'] as string) as number[];
      terms.forEach((t, i) => {
        let p = post.get(t);
        if (!p) post.set(t, (p = { ords: new Growable(Int32Array, 4), tf: new Growable(Int32Array, 4) }));
        p.ords.push(ord);
        p.tf.push(tf[i] as number);
      });
    }
    const vectors = await q(
      `SELECT ${VECTOR_COLUMNS} FROM content.search_vectors WHERE kbid = $1 AND paragraph BETWEEN $2::bigint AND $3::bigint`,
      [kbid, lo, after],
    );
    // in ordinal order: each group's vectors are appended ascending
    const arrived: { ord: number; vs: string; v: Uint8Array }[] = [];
    for (const r of vectors) {
      const ord = ordOf.get(r['id'] as string);
      if (ord !== undefined) arrived.push({ ord, vs: r['vectorset'] as string, v: r['v'] as Uint8Array });
    }
    arrived.sort((a, b) => a.ord - b.ord);
    for (const { ord, vs, v } of arrived) {
      const dim = sendDimension(v);
      let byDim = vecs.get(vs);
      if (!byDim) vecs.set(vs, (byDim = new Map()));
      let group = byDim.get(dim);
      // (never sized above the budget: a KB that cannot fit is found out as its vectors arrive)
      if (!group) byDim.set(dim, (group = new VectorGroupBuilder(dim, Math.min(vectorCapacity, Math.ceil(reads.budgetBytes / (4 * dim))))));
      group.addSend(ord, v);
      vectorBytes += 4 * dim;
    }
    if (ids.length > reads.maxParagraphs || vectorBytes > reads.budgetBytes) return { tooLarge: generation };
    if (rows.length < CHUNK) break;
  }
  const dfRows = await q(`SELECT coalesce(json_object_agg(term, df), '{}')::text AS df FROM content.search_terms WHERE kbid = $1`, [kbid]);
  const df = new Map(Object.entries(JSON.parse((dfRows[0]?.['df'] as string | undefined) ?? '{}') as Record<string, number>));
  const end = (await q(`SELECT generation::text AS generation FROM content.search_stats WHERE kbid = $1`, [kbid]))[0];
  if (!end) return 'gone';
  const moved = end['generation'] !== generation;

  // Each term's postings copied to their exact length, a few milliseconds at a time: at a million
  // paragraphs this is over a second of copying, which would otherwise stall every request.
  const postings = new Map<string, { ords: Int32Array; tf: Int32Array }>();
  let turn = performance.now();
  for (const [t, p] of post) {
    postings.set(t, { ords: p.ords.done(), tf: p.tf.done() });
    post.delete(t);
    if (performance.now() - turn > YIELD_AFTER_MS) {
      await new Promise<void>((r) => setImmediate(r));
      if (reads.closed()) return 'changed';
      turn = performance.now();
    }
  }
  const data: KbMemoryData = {
    kbid,
    generation,
    paragraphs: stats.paragraphs,
    totalLength: stats.totalLength,
    ids,
    hidden: hidden.done(),
    groupSet: groupSet.done(),
    groupSets: groupSets.values,
    df,
    lengths: lengths.done(),
    postings,
    vectors: new Map([...vecs].map(([vs, byDim]) => [vs, new Map([...byDim].map(([dim, group]) => [dim, [group.done()]]))])),
    attributes: { tagSets: tagSets.values, fields: fields.values, languages: languages.values, rids: rids.values },
    columns: { tagSet: tagSet.done(), field: field.done(), language: language.done(), rid: rid.done(), created: created.done() },
    runs: runs.done(),
  };
  const index = new KbMemoryIndex(data);
  if (index.bytes > reads.budgetBytes) return { tooLarge: generation };
  if (!moved) return index;
  // Written while it was read (a KB being ingested): what each statement saw is at least the
  // first generation's index, and the change log from there re-reads every paragraph and term a
  // later write touched, as it is now.
  const caught = await readChanges(reads, kbid, index);
  return caught instanceof KbMemoryIndex ? caught : caught === 'gone' ? 'gone' : 'changed';
}

type TypedArray = Int32Array | Uint8Array | Float64Array;

/** A typed array grown by doubling (a KB's millions of postings without JavaScript arrays of numbers). */
class Growable<T extends TypedArray> {
  private buf: T;
  private n = 0;

  constructor(
    private readonly make: new (n: number) => T,
    initial = 1024,
  ) {
    this.buf = new make(initial);
  }

  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new this.make(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  at(i: number): number {
    return this.buf[i] as number;
  }

  set(i: number, v: number): void {
    this.buf[i] = v;
  }

  /** The pushed values, in an array of exactly their length. */
  done(): T {
    return this.buf.length === this.n ? this.buf : (this.buf.slice(0, this.n) as T);
  }
}

/** Distinct values by key, numbered in order of arrival. */
class Interner<T> {
  readonly values: T[] = [];
  private readonly index = new Map<string, number>();

  /** `valueOf`: the value a key stands for, made once per distinct key. */
  constructor(private readonly valueOf: (key: string) => T) {}

  intern(key: string): number {
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(this.valueOf(key));
      this.index.set(key, i);
    }
    return i;
  }
}

const parseList = (key: string): string[] => JSON.parse(key) as string[];
const itself = (key: string): string => key;
