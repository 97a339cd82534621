import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { prepared, preparedQuery } from '@kb/platform/database';
import { Coalescer } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, keepsHnswIndex, type ContentOptions } from '../../content.tokens';
import { KbMemoryIndex } from './kb-memory-index';
import { MAX_TOUCHED, readChanges, type IndexReads } from './memory-changes';
import { readIndex } from './memory-load';
import { EXACT_SCAN_MAX } from './memory-retrievers';

/** Defaults of ContentOptions.searchMemory (README: SEARCH_MEMORY_MB, SEARCH_MEMORY_MAX_PARAGRAPHS). */
export const SEARCH_MEMORY_DEFAULTS = { budgetBytes: 256 * 1024 * 1024, maxParagraphs: 200_000 };
/** Every query reads it (a prepared statement: it is most of a keyword query's database time). */
const GENERATIONS = prepared(
  'SELECT kbid::text AS kbid, generation::text AS generation FROM content.search_stats WHERE kbid = ANY($1::uuid[])',
);

/** How long a KB found too large is not looked at again (unless its generation changes). */
const TOO_LARGE_RECHECK_MS = 30_000;

/** Longest a query waits for its KB's index to be brought up to date before it runs on SQL. */
const UPDATE_WAIT_MS = 1_000;

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
  private readonly reads: IndexReads;

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CONTENT_OPTIONS) options: ContentOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.budgetBytes = options.searchMemory?.budgetBytes ?? SEARCH_MEMORY_DEFAULTS.budgetBytes;
    this.maxParagraphs = options.searchMemory?.maxParagraphs ?? SEARCH_MEMORY_DEFAULTS.maxParagraphs;
    this.reads = { ds, budgetBytes: this.budgetBytes, maxParagraphs: this.maxParagraphs, closed: () => this.closed };
    // Without an approximate index in SQL, an exact scan in memory is the fastest answer at any size.
    this.exactScanMax = keepsHnswIndex(options) ? EXACT_SCAN_MAX : Number.POSITIVE_INFINITY;
    // Queries that arrive while a read is running share the next one: each still sees a
    // generation read after it arrived.
    this.generations = new Coalescer(async (kbids) => {
      const distinct = [...new Set(kbids)];
      const rows = await preparedQuery<{ kbid: string; generation: string }>(this.ds, GENERATIONS, [distinct]);
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

  /** The KB's changes since `base` was read, applied to it (memory-changes.ts). */
  private update(kbid: string, base: KbMemoryIndex): Promise<KbMemoryIndex | 'full' | 'gone'> {
    return readChanges(this.reads, kbid, base);
  }

  /** A full read of the KB's index (memory-load.ts). */
  private load(kbid: string): Promise<KbMemoryIndex | 'changed' | 'gone' | { tooLarge: string }> {
    return readIndex(this.reads, kbid);
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
}

/** Whether `p` settles within `ms` (true: it resolved to true). */
async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
