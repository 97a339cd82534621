import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, type ContentOptions } from '../../content.tokens';

const TABLES = [
  'content.search_paragraphs',
  'content.search_postings',
  'content.search_terms',
  'content.search_stats',
  'content.search_vectors',
  'content.search_changes',
  'content.resources',
];

/** How long the change log keeps a change (an index in memory further behind is read again in full). */
export const SEARCH_CHANGES_KEPT = '15 minutes';

/**
 * Keeps the planner's statistics and the index tables healthy. The embedded PostgreSQL (PGlite)
 * has no autovacuum: without ANALYZE the planner never learns the tables grew (it then scans every
 * vector instead of using HNSW), and updated term statistics leave dead rows behind. Every
 * `searchMaintenanceMs` (default 60 s), when the index changed since the last pass, the search
 * tables are vacuumed and analysed, and the index change log loses what is older than
 * SEARCH_CHANGES_KEPT. On a PostgreSQL server autovacuum does the same; this pass
 * is harmless there.
 */
@Injectable()
export class SearchMaintenanceService implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private changes = 0;
  private running?: Promise<void>;

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CONTENT_OPTIONS) private readonly options: ContentOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Called by the indexer for every indexed or removed paragraph batch. */
  noteChange(n = 1): void {
    this.changes += n;
  }

  onApplicationBootstrap(): void {
    const every = this.options.searchMaintenanceMs ?? 60_000;
    if (every <= 0) return;
    // A fresh process does not know what changed before it started: the first pass always runs.
    this.changes = 1;
    this.timer = setInterval(() => void this.runOnce(), every);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass (also for tests and after bulk loads): VACUUM ANALYZE of the search tables when anything changed. */
  async runOnce(force = false): Promise<boolean> {
    if (this.running || (!force && this.changes === 0)) return false;
    const pending = this.changes;
    this.running = (async () => {
      const started = Date.now();
      try {
        await this.ds.query(`DELETE FROM content.search_changes WHERE at < clock_timestamp() - interval '${SEARCH_CHANGES_KEPT}'`);
        for (const table of TABLES) await this.ds.query(`VACUUM (ANALYZE) ${table}`);
        this.changes = Math.max(0, this.changes - pending);
        this.logger.info({ ms: Date.now() - started, changes: pending }, 'search tables vacuumed and analysed');
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'search maintenance failed');
      }
    })();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
    return true;
  }
}
