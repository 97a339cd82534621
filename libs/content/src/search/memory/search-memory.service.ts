import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Coalescer } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, keepsHnswIndex, type ContentOptions } from '../../content.tokens';
import { KbMemoryIndex, vectorGroup, type KbMemoryData } from './kb-memory-index';
import { EXACT_SCAN_MAX } from './memory-retrievers';

/** Defaults of ContentOptions.searchMemory (README: SEARCH_MEMORY_MB, SEARCH_MEMORY_MAX_PARAGRAPHS). */
export const SEARCH_MEMORY_DEFAULTS = { budgetBytes: 256 * 1024 * 1024, maxParagraphs: 200_000 };

/** Paragraph ids read per statement while building (each statement a few ms, so queries interleave). */
const CHUNK = 2_000;
/** How long a KB found too large is not looked at again (unless its generation changes). */
const TOO_LARGE_RECHECK_MS = 30_000;

interface Entry {
  index?: KbMemoryIndex;
  /** The generation a KB was found too large at. */
  tooLarge?: { generation: string; until: number };
  building?: Promise<void>;
  /** After a build saw the index change under it: no new build before this time. */
  retryAt?: number;
  backoffMs?: number;
}

export interface SearchMemoryStats {
  enabled: boolean;
  budgetBytes: number;
  bytes: number;
  kbs: { kbid: string; generation: string; paragraphs: number; bytes: number }[];
}

/**
 * Each knowledge box's retrieval data in memory, next to the database (docs/decisions/0014). The
 * database stays the source of truth: every query reads the KB's index generation
 * (content.search_stats.generation, set anew by every index write in its own transaction, on any
 * replica), batched with the other queries of the moment, and uses the memory index only when
 * it was built at exactly that generation. Otherwise the query runs on SQL and a rebuild starts
 * in the background. Memory is bounded: a budget in bytes, least recently used KBs evicted, KBs
 * above the paragraph limit or the budget left to SQL.
 */
@Injectable()
export class SearchMemoryService implements OnModuleDestroy {
  private readonly entries = new Map<string, Entry>();
  private readonly budgetBytes: number;
  private readonly maxParagraphs: number;
  private closed = false;
  /** Vectors a filtered exact scan in memory reads at most before SQL's HNSW index answers instead. */
  readonly exactScanMax: number;
  private readonly generations: Coalescer<string, string | undefined>;

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CONTENT_OPTIONS) options: ContentOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.budgetBytes = options.searchMemory?.budgetBytes ?? SEARCH_MEMORY_DEFAULTS.budgetBytes;
    this.maxParagraphs = options.searchMemory?.maxParagraphs ?? SEARCH_MEMORY_DEFAULTS.maxParagraphs;
    // Without an approximate index in SQL, an exact scan in memory is the fastest answer at any size.
    this.exactScanMax = keepsHnswIndex(options) ? EXACT_SCAN_MAX : Number.POSITIVE_INFINITY;
    // Queries that arrive while a read is running share the next one: each still sees a
    // generation read after it arrived.
    this.generations = new Coalescer(async (kbids) => {
      const distinct = [...new Set(kbids)];
      const rows = (await this.ds.query(`SELECT kbid::text AS kbid, generation::text AS generation FROM content.search_stats WHERE kbid = ANY($1::uuid[])`, [distinct])) as { kbid: string; generation: string }[];
      const byKb = new Map(rows.map((r) => [r.kbid, r.generation]));
      return kbids.map((k) => byKb.get(k));
    });
  }

  get enabled(): boolean {
    return this.budgetBytes > 0 && this.maxParagraphs > 0;
  }

  onModuleDestroy(): void {
    this.closed = true;
    this.entries.clear();
  }

  /**
   * The KB's memory index if it is current (built at the generation the database has now), else
   * undefined — and then a rebuild is started in the background; the caller uses SQL.
   */
  async current(kbid: string): Promise<KbMemoryIndex | undefined> {
    if (!this.enabled || this.closed) return undefined;
    const entry = this.entries.get(kbid);
    if (entry?.tooLarge && entry.tooLarge.until > Date.now()) return undefined;
    let generation: string | undefined;
    try {
      generation = await this.generations.submit(kbid.toLowerCase());
    } catch {
      return undefined; // the SQL path answers (and reports what is wrong)
    }
    if (generation === undefined) {
      // No index at all (an empty or deleted KB): nothing to hold.
      if (entry && !entry.building) this.entries.delete(kbid);
      return undefined;
    }
    if (entry?.index && entry.index.generation === generation) {
      // most recently used last
      this.entries.delete(kbid);
      this.entries.set(kbid, entry);
      return entry.index;
    }
    if (entry?.tooLarge?.generation === generation) {
      entry.tooLarge.until = Date.now() + TOO_LARGE_RECHECK_MS;
      return undefined;
    }
    this.schedule(kbid);
    return undefined;
  }

  stats(): SearchMemoryStats {
    const kbs = [...this.entries.entries()].flatMap(([kbid, e]) => (e.index ? [{ kbid, generation: e.index.generation, paragraphs: e.index.size, bytes: e.index.bytes }] : []));
    return { enabled: this.enabled, budgetBytes: this.budgetBytes, bytes: kbs.reduce((n, k) => n + k.bytes, 0), kbs };
  }

  /** Builds a KB's index now (tests and warm-up); resolves when it is held, or when it cannot be. */
  async build(kbid: string): Promise<KbMemoryIndex | undefined> {
    const entry = this.entries.get(kbid);
    if (entry?.building) await entry.building;
    else {
      if (entry) entry.retryAt = undefined;
      this.schedule(kbid);
      await this.entries.get(kbid)?.building;
    }
    return this.entries.get(kbid)?.index;
  }

  private schedule(kbid: string): void {
    let entry = this.entries.get(kbid);
    if (!entry) {
      entry = {};
      this.entries.set(kbid, entry);
    }
    if (entry.building || (entry.retryAt !== undefined && entry.retryAt > Date.now())) return;
    const e = entry;
    e.building = (async () => {
      const started = Date.now();
      try {
        const outcome = await this.load(kbid);
        if (this.closed) return;
        if (outcome === 'changed') {
          // The index was written while it was read: try again later, later each time.
          e.backoffMs = Math.min(60_000, (e.backoffMs ?? 500) * 2);
          e.retryAt = Date.now() + e.backoffMs;
          return;
        }
        e.backoffMs = undefined;
        e.retryAt = undefined;
        if (outcome === 'gone') {
          e.index = undefined;
          return;
        }
        if ('tooLarge' in outcome) {
          e.index = undefined;
          e.tooLarge = { generation: outcome.tooLarge, until: Date.now() + TOO_LARGE_RECHECK_MS };
          this.logger.info({ kbid, generation: outcome.tooLarge }, 'search index above the memory limits: searched with SQL');
          return;
        }
        e.index = outcome;
        e.tooLarge = undefined;
        this.evict(kbid);
        this.logger.info({ kbid, generation: outcome.generation, paragraphs: outcome.size, bytes: outcome.bytes, ms: Date.now() - started }, 'search index held in memory');
      } catch (err) {
        e.backoffMs = Math.min(60_000, (e.backoffMs ?? 500) * 2);
        e.retryAt = Date.now() + e.backoffMs;
        this.logger.warn({ kbid, err: (err as Error).message }, 'search index not loaded into memory');
      } finally {
        e.building = undefined;
        if (!e.index && !e.tooLarge && !e.retryAt && this.entries.get(kbid) === e) this.entries.delete(kbid);
      }
    })();
  }

  /** Least recently used KBs out until the budget holds; the newest alone above it is not kept. */
  private evict(newest: string): void {
    let total = 0;
    for (const e of this.entries.values()) total += e.index?.bytes ?? 0;
    for (const [kbid, e] of this.entries) {
      if (total <= this.budgetBytes) break;
      if (!e.index || kbid === newest) continue;
      total -= e.index.bytes;
      e.index = undefined;
      if (!e.building) this.entries.delete(kbid);
    }
    const n = this.entries.get(newest);
    if (total > this.budgetBytes && n?.index) {
      n.tooLarge = { generation: n.index.generation, until: Date.now() + TOO_LARGE_RECHECK_MS };
      this.logger.info({ kbid: newest, bytes: n.index.bytes, budget: this.budgetBytes }, 'search index above the memory budget: searched with SQL');
      n.index = undefined;
    }
  }

  /**
   * Reads a KB's index in short statements (queries interleave with them on the embedded
   * database). The generation is read before and after: if it changed, a write committed in
   * between and the result is thrown away ('changed'); if not, every statement saw the same index.
   */
  private async load(kbid: string): Promise<KbMemoryIndex | 'changed' | 'gone' | { tooLarge: string }> {
    const q = (sql: string, params: unknown[]) => this.ds.query(sql, params) as Promise<Record<string, unknown>[]>;
    const stats = (await q(`SELECT generation::text AS generation, paragraphs::float8 AS paragraphs, total_length::float8 AS total_length FROM content.search_stats WHERE kbid = $1`, [kbid]))[0];
    if (!stats) return 'gone';
    const generation = stats['generation'] as string;
    // The postings are at most total_length entries of 8 bytes: a bound known before reading any.
    if ((stats['paragraphs'] as number) > this.maxParagraphs || (stats['total_length'] as number) * 8 > this.budgetBytes) return { tooLarge: generation };

    const ids: string[] = [];
    const hidden = new Growable(Uint8Array);
    const groupSet = new Growable(Int32Array);
    const groupSets = new Interner<string[]>();
    groupSets.intern('[]', () => []);
    const lengths = new Growable(Int32Array);
    const tagSet = new Growable(Int32Array);
    const tagSets = new Interner<string[]>();
    const field = new Growable(Int32Array);
    const fields = new Interner<string>();
    const language = new Growable(Int32Array);
    const languages = new Interner<string>();
    const rid = new Growable(Int32Array);
    const rids = new Interner<string>();
    const runs = new Growable(Int32Array);
    const post = new Map<string, { ords: Growable<Int32Array>; tf: Growable<Int32Array> }>();
    const vecs = new Map<string, Map<number, { ord: number; v: Float32Array }[]>>();
    let after = '0';
    for (;;) {
      if (this.closed) return 'changed';
      const rows = await q(
        // (the output column is not named id: ORDER BY id would then sort the text)
        `SELECT id::text AS pid, hidden, array_to_json(groups)::text AS groups, array_to_json(tags)::text AS tags, field, language, rid::text AS rid
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
        groupSet.push(groupSets.intern(g, () => JSON.parse(g) as string[]));
        const t = r['tags'] as string;
        tagSet.push(tagSets.intern(t, () => JSON.parse(t) as string[]));
        field.push(fields.intern(r['field'] as string));
        language.push(languages.intern(r['language'] as string));
        rid.push(rids.intern(r['rid'] as string));
        lengths.push(0);
        // a new run when any filter attribute differs from the previous paragraph's
        const p = ord - 1;
        if (ord === 0 || hidden.at(ord) !== hidden.at(p) || groupSet.at(ord) !== groupSet.at(p) || tagSet.at(ord) !== tagSet.at(p) || field.at(ord) !== field.at(p) || language.at(ord) !== language.at(p) || rid.at(ord) !== rid.at(p)) runs.push(ord);
      }
      const lo = ids[first] as string;
      after = ids[ids.length - 1] as string;
      const postings = await q(
        `SELECT paragraph::text AS id, min(length) AS length, array_to_json(array_agg(term))::text AS terms, array_to_json(array_agg(tf))::text AS tf
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
      // Vectors in pgvector's binary form (vector_send: int16 dimensions, int16 unused, then
      // big-endian float4s): the stored float32 values exactly, without printing and parsing text.
      const vectors = await q(
        `SELECT paragraph::text AS id, vectorset, vector_send(vector) AS v FROM content.search_vectors WHERE kbid = $1 AND paragraph BETWEEN $2::bigint AND $3::bigint`,
        [kbid, lo, after],
      );
      for (const r of vectors) {
        const ord = ordOf.get(r['id'] as string);
        if (ord === undefined) continue;
        const v = vectorFromSend(r['v'] as Uint8Array);
        const vs = r['vectorset'] as string;
        let byDim = vecs.get(vs);
        if (!byDim) vecs.set(vs, (byDim = new Map()));
        let list = byDim.get(v.length);
        if (!list) byDim.set(v.length, (list = []));
        list.push({ ord, v });
      }
      if (ids.length > this.maxParagraphs) return { tooLarge: generation };
      if (rows.length < CHUNK) break;
    }
    const dfRows = await q(`SELECT coalesce(json_object_agg(term, df), '{}')::text AS df FROM content.search_terms WHERE kbid = $1`, [kbid]);
    const df = new Map(Object.entries(JSON.parse((dfRows[0]?.['df'] as string | undefined) ?? '{}') as Record<string, number>));
    const end = (await q(`SELECT generation::text AS generation FROM content.search_stats WHERE kbid = $1`, [kbid]))[0];
    if (!end) return 'gone';
    if (end['generation'] !== generation) return 'changed';

    const data: KbMemoryData = {
      kbid, generation, paragraphs: stats['paragraphs'] as number, totalLength: stats['total_length'] as number,
      ids, hidden: hidden.done(), groupSet: groupSet.done(), groupSets: groupSets.values, df, lengths: lengths.done(),
      postings: new Map([...post].map(([t, p]) => [t, { ords: p.ords.done(), tf: p.tf.done() }])),
      vectors: new Map([...vecs].map(([vs, byDim]) => [vs, new Map([...byDim].map(([dim, list]) => [dim, vectorGroup(list, dim)]))])),
      attributes: { tagSets: tagSets.values, fields: fields.values, languages: languages.values, rids: rids.values },
      columns: { tagSet: tagSet.done(), field: field.done(), language: language.done(), rid: rid.done() },
      runs: runs.done(),
    };
    const index = new KbMemoryIndex(data);
    if (index.bytes > this.budgetBytes) return { tooLarge: generation };
    return index;
  }
}

type TypedArray = Int32Array | Uint8Array;

/** A typed array grown by doubling (a KB's millions of postings without JavaScript arrays of numbers). */
class Growable<T extends TypedArray> {
  private buf: T;
  private n = 0;

  constructor(private readonly make: new (n: number) => T, initial = 1024) {
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

  intern(key: string, value?: () => T): number {
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value ? value() : (key as unknown as T));
      this.index.set(key, i);
    }
    return i;
  }
}

/** A vector from pgvector's binary send format (int16 dimensions, int16 unused, big-endian float4s). */
export function vectorFromSend(b: Uint8Array): Float32Array {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dim = view.getUint16(0);
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}
