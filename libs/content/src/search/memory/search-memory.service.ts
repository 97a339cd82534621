import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { Coalescer } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, keepsHnswIndex, type ContentOptions } from '../../content.tokens';
import { KbMemoryIndex, VectorGroupBuilder, sendDimension, type KbChanges, type KbMemoryData } from './kb-memory-index';
import { EXACT_SCAN_MAX } from './memory-retrievers';

/** Defaults of ContentOptions.searchMemory (README: SEARCH_MEMORY_MB, SEARCH_MEMORY_MAX_PARAGRAPHS). */
export const SEARCH_MEMORY_DEFAULTS = { budgetBytes: 256 * 1024 * 1024, maxParagraphs: 200_000 };

/** Paragraph ids read per statement while building (each statement a few ms, so queries interleave). */
const CHUNK = 2_000;
/** Longest run of work a build does before letting queries through (when it is not waiting on SQL). */
const YIELD_AFTER_MS = 10;
/** How long a KB found too large is not looked at again (unless its generation changes). */
const TOO_LARGE_RECHECK_MS = 30_000;
/** What the full read and updates read of each paragraph (`pid`: ORDER BY id must not sort the text). */
const PARAGRAPH_COLUMNS = `id::text AS pid, hidden, array_to_json(groups)::text AS groups, array_to_json(tags)::text AS tags, field, language, rid::text AS rid, (extract(epoch FROM created_at) * 1000000)::float8 AS created`;
/** A paragraph's postings, grouped by paragraph: its length and each term with its tf. */
const POSTINGS_COLUMNS = `paragraph::text AS id, min(length) AS length, array_to_json(array_agg(term))::text AS terms, array_to_json(array_agg(tf))::text AS tf`;
/**
 * Vectors in pgvector's binary form (vector_send: int16 dimensions, int16 unused, then big-endian
 * float4s): the stored float32 values exactly, without printing and parsing text.
 */
const VECTOR_COLUMNS = `paragraph::text AS id, vectorset, vector_send(vector) AS v`;

/** Longest a query waits for its KB's index to be brought up to date before it runs on SQL. */
const UPDATE_WAIT_MS = 1_000;
/** Links of the change log an update follows at most; a longer way is a full read. */
const MAX_LINKS = 5_000;
/** Paragraphs an update touches at most: this many, or a quarter of the KB if more. */
const MAX_TOUCHED = 5_000;

interface Entry {
  index?: KbMemoryIndex;
  /** When the snapshot `index` shows was read (an index read later holds every write before). */
  readAt?: number;
  /** While an update of `index` from the change log runs: resolves true when it was brought up to date. */
  updating?: Promise<boolean>;
  /** A full read made while `index` keeps being updated, to replace it when it has fragmented. */
  compacting?: Promise<void>;
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
  /** Per KB held: `appended` and `dead` paragraphs since its last full read (updates from the change log). */
  kbs: { kbid: string; generation: string; paragraphs: number; bytes: number; appended: number; dead: number }[];
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
      const rows = (await this.ds.query(
        `SELECT kbid::text AS kbid, generation::text AS generation FROM content.search_stats WHERE kbid = ANY($1::uuid[])`,
        [distinct],
      )) as { kbid: string; generation: string }[];
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
    const asked = Date.now();
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
    // An index held at an older generation is brought up to date from the change log, usually in
    // a few statements: worth waiting for (a large KB's SQL path takes seconds). An update that was
    // already running may have read its snapshot before this query arrived: then one more.
    const deadline = Date.now() + UPDATE_WAIT_MS;
    for (let attempt = 0; attempt < 3; attempt++) {
      this.schedule(kbid);
      const e = this.entries.get(kbid);
      if (!e?.updating || !(await within(e.updating, deadline - Date.now()))) break;
      if (e.index && (e.index.generation === generation || (e.readAt ?? 0) >= asked)) {
        this.entries.delete(kbid);
        this.entries.set(kbid, e);
        return e.index;
      }
    }
    return undefined;
  }

  stats(): SearchMemoryStats {
    const kbs = [...this.entries.entries()].flatMap(([kbid, e]) => {
      if (!e.index) return [];
      const { appended, dead } = e.index.fragmentation;
      return [{ kbid, generation: e.index.generation, paragraphs: e.index.size - dead, bytes: e.index.bytes, appended, dead }];
    });
    return { enabled: this.enabled, budgetBytes: this.budgetBytes, bytes: kbs.reduce((n, k) => n + k.bytes, 0), kbs };
  }

  /** Resolves when nothing runs for the KB any more: no build, update or full read in the background (tests). */
  async settled(kbid: string): Promise<void> {
    for (let e = this.entries.get(kbid); e && (e.building || e.compacting); e = this.entries.get(kbid))
      await Promise.all([e.building, e.compacting]);
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
    let updated!: (ok: boolean) => void;
    if (e.index) e.updating = new Promise<boolean>((r) => (updated = r));
    e.building = (async () => {
      const started = Date.now();
      try {
        // (a full read made in the background may replace the index while it is updated: then the
        // update starts again from that one)
        for (let attempt = 0; e.index && attempt < 3; attempt++) {
          const base = e.index;
          const readAt = Date.now();
          const next = await this.update(kbid, base).catch((err: unknown) => {
            this.logger.warn({ kbid, err: (err as Error).message }, 'search index in memory not updated: reading it again');
            return 'full' as const;
          });
          if (!this.closed && next !== 'gone' && e.index && e.index !== base) {
            if (attempt < 2) continue;
            return; // (the next query starts another)
          }
          e.updating = undefined;
          if (next instanceof KbMemoryIndex && !this.closed && e.index === base) {
            e.index = next;
            e.readAt = readAt;
            e.backoffMs = undefined;
            e.retryAt = undefined;
            updated(true);
            this.evict(kbid);
            if (next !== base)
              this.logger.debug(
                { kbid, generation: next.generation, paragraphs: next.size, ms: Date.now() - started },
                'search index in memory updated',
              );
            if (e.index === next && this.fragmented(next)) this.compact(kbid, e);
            return;
          }
          updated(false);
          if (next === 'gone') {
            e.index = undefined;
            return;
          }
          if (next !== 'full' || this.closed) return;
          break;
        }
        const readAt = Date.now();
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
        e.readAt = readAt;
        e.tooLarge = undefined;
        this.evict(kbid);
        this.logger.info(
          { kbid, generation: outcome.generation, paragraphs: outcome.size, bytes: outcome.bytes, ms: Date.now() - started },
          'search index held in memory',
        );
      } catch (err) {
        e.backoffMs = Math.min(60_000, (e.backoffMs ?? 500) * 2);
        e.retryAt = Date.now() + e.backoffMs;
        this.logger.warn({ kbid, err: (err as Error).message }, 'search index not loaded into memory');
      } finally {
        e.building = undefined;
        if (e.updating) {
          e.updating = undefined;
          updated(false);
        }
        if (!e.index && !e.tooLarge && !e.retryAt && !e.compacting && this.entries.get(kbid) === e) this.entries.delete(kbid);
      }
    })();
  }

  /** Much of the index came from applied changes: dead paragraphs, appended ones, vector groups. */
  private fragmented(index: KbMemoryIndex): boolean {
    const f = index.fragmentation;
    return f.dead > index.size * 0.2 || f.appended > Math.max(MAX_TOUCHED, index.size * 0.25) || f.groups > 32;
  }

  /**
   * Reads the KB again in full in the background while `e.index` keeps being updated and used;
   * the fresh index is brought up to date from the change log and replaces it.
   */
  private compact(kbid: string, e: Entry): void {
    if (e.compacting) return;
    e.compacting = (async () => {
      try {
        const fresh = await this.load(kbid);
        if (!(fresh instanceof KbMemoryIndex) || this.closed) return;
        // Brought up to date; while the KB is written, updates of the old index may read a later
        // snapshot meanwhile: then once more, from there.
        let candidate = fresh;
        for (let attempt = 0; attempt < 5; attempt++) {
          const now = Date.now();
          const current = await this.update(kbid, candidate);
          if (!(current instanceof KbMemoryIndex) || this.closed || !e.index || this.entries.get(kbid) !== e) return;
          // (current as of `now`, whether or not anything changed since the full read)
          candidate = current;
          if ((e.readAt ?? 0) > now) continue;
          e.index = candidate;
          e.readAt = now;
          this.evict(kbid);
          this.logger.info(
            { kbid, generation: candidate.generation, paragraphs: candidate.size, bytes: candidate.bytes },
            'search index in memory read again in full',
          );
          return;
        }
      } catch (err) {
        this.logger.warn({ kbid, err: (err as Error).message }, 'search index not read again in full');
      } finally {
        e.compacting = undefined;
      }
    })();
  }

  /**
   * The KB's changes since `base` was read, from the change log (migration 1764800000000), applied
   * to it: one snapshot (REPEATABLE READ) reads the generation, the chain of changes from `base`'s
   * generation to it, and the paragraphs, postings, vectors and term statistics they touched as
   * they are now. 'full' when the chain is broken (a generation set without a change row, or one
   * deleted as too old) or too long to be worth it; 'gone' without an index.
   */
  private async update(kbid: string, base: KbMemoryIndex): Promise<KbMemoryIndex | 'full' | 'gone'> {
    const changes = await this.ds.transaction('REPEATABLE READ', async (m): Promise<KbChanges | 'same' | 'full' | 'gone'> => {
      const q = (sql: string, params: unknown[]) => m.query(sql, params) as Promise<Record<string, unknown>[]>;
      const stats = (
        await q(
          `SELECT generation::text AS generation, paragraphs::float8 AS paragraphs, total_length::float8 AS total_length FROM content.search_stats WHERE kbid = $1`,
          [kbid],
        )
      )[0];
      if (!stats) return 'gone';
      const generation = stats['generation'] as string;
      if (generation === base.generation) return 'same';
      if ((stats['paragraphs'] as number) > this.maxParagraphs) return 'full';
      const chain = await q(
        `WITH RECURSIVE chain AS (
           SELECT generation, paragraphs, terms, 1 AS n FROM content.search_changes WHERE kbid = $1 AND prev = $2::bigint
           UNION ALL
           SELECT c.generation, c.paragraphs, c.terms, chain.n + 1 FROM chain JOIN content.search_changes c ON c.kbid = $1 AND c.prev = chain.generation WHERE chain.n <= ${MAX_LINKS}
         )
         SELECT (SELECT max(n) FROM chain) AS links,
                (SELECT generation::text FROM chain ORDER BY n DESC LIMIT 1) AS last,
                (SELECT coalesce(array_to_json(array_agg(DISTINCT x::text)), '[]')::text FROM chain, unnest(chain.paragraphs) AS x) AS paragraphs,
                (SELECT coalesce(array_to_json(array_agg(DISTINCT y)), '[]')::text FROM chain, unnest(chain.terms) AS y) AS terms`,
        [kbid, base.generation],
      );
      const c = chain[0];
      if (!c || c['last'] !== generation || Number(c['links']) > MAX_LINKS) return 'full';
      const touched = JSON.parse(c['paragraphs'] as string) as string[];
      const terms = JSON.parse(c['terms'] as string) as string[];
      if (touched.length > Math.max(MAX_TOUCHED, base.size / 4)) return 'full';
      const rows: KbChanges['rows'] = [];
      const postings: KbChanges['postings'] = new Map();
      const vectors: KbChanges['vectors'] = [];
      for (let i = 0; i < touched.length; i += CHUNK) {
        const ids = touched.slice(i, i + CHUNK);
        for (const r of await q(
          `SELECT ${PARAGRAPH_COLUMNS}
             FROM content.search_paragraphs WHERE kbid = $1 AND id = ANY($2::bigint[])`,
          [kbid, ids],
        )) {
          rows.push({
            id: r['pid'] as string,
            hidden: r['hidden'] as boolean,
            groups: r['groups'] as string,
            tags: r['tags'] as string,
            field: r['field'] as string,
            language: r['language'] as string,
            rid: r['rid'] as string,
            created: r['created'] as number,
          });
        }
        for (const r of await q(
          `SELECT ${POSTINGS_COLUMNS}
             FROM content.search_postings WHERE kbid = $1 AND paragraph = ANY($2::bigint[]) GROUP BY paragraph`,
          [kbid, ids],
        )) {
          postings.set(r['id'] as string, {
            length: r['length'] as number,
            terms: JSON.parse(r['terms'] as string) as string[],
            tf: JSON.parse(r['tf'] as string) as number[],
          });
        }
        for (const r of await q(`SELECT ${VECTOR_COLUMNS} FROM content.search_vectors WHERE kbid = $1 AND paragraph = ANY($2::bigint[])`, [
          kbid,
          ids,
        ])) {
          vectors.push({ id: r['id'] as string, vectorset: r['vectorset'] as string, v: r['v'] as Uint8Array });
        }
      }
      // ids ascending, as the full read appends them
      rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      const df = new Map<string, number>(terms.map((t) => [t, 0]));
      for (let i = 0; i < terms.length; i += CHUNK) {
        for (const r of await q(`SELECT term, df FROM content.search_terms WHERE kbid = $1 AND term = ANY($2::text[])`, [
          kbid,
          terms.slice(i, i + CHUNK),
        ]))
          df.set(r['term'] as string, r['df'] as number);
      }
      return {
        generation,
        paragraphs: stats['paragraphs'] as number,
        totalLength: stats['total_length'] as number,
        touched,
        rows,
        postings,
        vectors,
        df,
      };
    });
    if (changes === 'same') return base;
    if (changes === 'full' || changes === 'gone') return changes;
    return base.applied(changes);
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
      this.logger.info(
        { kbid: newest, bytes: n.index.bytes, budget: this.budgetBytes },
        'search index above the memory budget: searched with SQL',
      );
      n.index = undefined;
    }
  }

  /**
   * Reads a KB's index in short statements (queries interleave with them on the embedded
   * database). The generation is read before and after: if it changed, writes committed in between,
   * and the change log from the first generation brings what was read up to date; only when that
   * is not possible (see update) is the result thrown away ('changed').
   */
  private async load(kbid: string): Promise<KbMemoryIndex | 'changed' | 'gone' | { tooLarge: string }> {
    const q = (sql: string, params: unknown[]) => this.ds.query(sql, params) as Promise<Record<string, unknown>[]>;
    const stats = (
      await q(
        `SELECT generation::text AS generation, paragraphs::float8 AS paragraphs, total_length::float8 AS total_length FROM content.search_stats WHERE kbid = $1`,
        [kbid],
      )
    )[0];
    if (!stats) return 'gone';
    const generation = stats['generation'] as string;
    // The postings are at most total_length entries of 8 bytes: a bound known before reading any.
    if ((stats['paragraphs'] as number) > this.maxParagraphs || (stats['total_length'] as number) * 8 > this.budgetBytes)
      return { tooLarge: generation };

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
    const vectorCapacity = Math.max(1, stats['paragraphs'] as number);
    let vectorBytes = 0;
    let after = '0';
    for (;;) {
      if (this.closed) return 'changed';
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
        if (!group)
          byDim.set(dim, (group = new VectorGroupBuilder(dim, Math.min(vectorCapacity, Math.ceil(this.budgetBytes / (4 * dim))))));
        group.addSend(ord, v);
        vectorBytes += 4 * dim;
      }
      if (ids.length > this.maxParagraphs || vectorBytes > this.budgetBytes) return { tooLarge: generation };
      if (rows.length < CHUNK) break;
    }
    const dfRows = await q(`SELECT coalesce(json_object_agg(term, df), '{}')::text AS df FROM content.search_terms WHERE kbid = $1`, [
      kbid,
    ]);
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
        if (this.closed) return 'changed';
        turn = performance.now();
      }
    }
    const data: KbMemoryData = {
      kbid,
      generation,
      paragraphs: stats['paragraphs'] as number,
      totalLength: stats['total_length'] as number,
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
    if (index.bytes > this.budgetBytes) return { tooLarge: generation };
    if (!moved) return index;
    // Written while it was read (a KB being ingested): what each statement saw is at least the
    // first generation's index, and the change log from there re-reads every paragraph and term a
    // later write touched, as it is now.
    const caught = await this.update(kbid, index);
    return caught instanceof KbMemoryIndex ? caught : caught === 'gone' ? 'gone' : 'changed';
  }
}

type TypedArray = Int32Array | Uint8Array | Float64Array;

/** Whether `p` settles within `ms` (true: it resolved to true). */
async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

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
