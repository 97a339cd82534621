import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  stagedImportKey,
  type KbArchiveHeadDto,
  type KbExportCreatedDto,
  type KbExportFileDto,
  type KbImportCreatedDto,
  type KbTransferRef,
  type KbTransferStatusDto,
  type PeekKbArchiveRequest,
  type StartKbExportRequest,
  type StartKbImportRequest,
} from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, type ContentOptions } from '../content.tokens';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, UUID, type ArchiveLimits } from './archive-format';
import { KbExporter, type ExportJob } from './kb-exporter';
import { KbImporter } from './kb-importer';

/** A job whose process died is taken up again after this long; after this many tries it errors. */
const LEASE_MINUTES = 10;
const MAX_ATTEMPTS = 3;
/** Jobs waiting per KB: more is refused (429) until some are done. */
const MAX_PENDING_PER_KB = 3;
/** Finished exports (and every job's record) are kept this long. */
const KEEP_DAYS = 7;

interface TransferRow {
  id: string;
  kbid: string;
  kind: TransferKind;
  status: KbTransferStatusDto['status'];
  blob_key: string;
  params: Record<string, unknown>;
  total: number;
  processed: number;
  attempts: number;
  error: string | null;
}

export type TransferKind = 'export' | 'import' | 'backup';

export const exportBlobKey = (kbid: string, id: string) => `content/kbs/${kbid}/exports/${id}.tar.gz`;

/**
 * Export and import jobs of Knowledge Boxes (API-MAP 3 "Export / import", docs/export-format.md).
 * A request records a job; a background worker of the content service (one job at a time per
 * process, leased, so a job whose process died is taken up again) writes the archive to the blob
 * store or reads a staged one into the KB. An import that fails removes what it wrote.
 */
@Injectable()
export class KbTransfersService implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly stop = new AbortController();
  private readonly pollMs: number;
  private readonly limits: ArchiveLimits;

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CONTENT_OPTIONS) options: ContentOptions,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly exporter: KbExporter,
    private readonly importer: KbImporter,
  ) {
    this.pollMs = options.transferPollMs ?? 2000;
    this.limits = { ...DEFAULT_ARCHIVE_LIMITS, ...(options.archiveLimits ?? {}) };
  }

  onModuleInit(): void {
    if (this.pollMs > 0) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  async startExport(req: StartKbExportRequest): Promise<KbExportCreatedDto> {
    const id = randomUUID();
    await this.record(id, req.kbid, 'export', exportBlobKey(req.kbid, id), { kb_config: req.kb_config });
    return { export_id: id };
  }

  async startImport(req: StartKbImportRequest): Promise<KbImportCreatedDto> {
    const params = { max_blob_bytes: req.max_blob_bytes, size_bytes: req.size_bytes };
    await this.record(req.import_id, req.kbid, 'import', stagedImportKey(req.import_id), params);
    return { import_id: req.import_id };
  }

  async peek(req: PeekKbArchiveRequest): Promise<KbArchiveHeadDto> {
    try {
      const head = await this.importer.head(stagedImportKey(req.import_id), this.limits);
      return { source_kbid: head.sourceKbid, kb: head.kb };
    } catch (err) {
      if (err instanceof ArchiveError)
        throw DomainError.validation([{ loc: ['body'], msg: `Not a valid Knowledge Box archive: ${err.message}`, type: 'value_error' }]);
      throw err;
    }
  }

  status(kind: 'export' | 'import', ref: KbTransferRef): Promise<KbTransferStatusDto> {
    return this.find(kind, ref).then((row) => ({
      status: row.status,
      total: row.total,
      processed: row.processed,
      retries: Math.max(0, row.attempts - 1),
      error: row.error,
    }));
  }

  async exportFile(ref: KbTransferRef): Promise<KbExportFileDto> {
    const row = await this.find('export', ref);
    if (row.status !== 'finished') throw new DomainError(ErrorCodes.CONFLICT, `The export is ${row.status}, not finished: poll its status`);
    return { blob_key: row.blob_key, filename: `kb-${row.kbid}-${row.id}.tar.gz` };
  }

  /** Runs the waiting jobs now (tests; the worker also polls). */
  async drain(): Promise<void> {
    while (await this.work()) {
      // one job per turn
    }
  }

  /** Records a job (429 when the KB has too many waiting) and wakes the worker. */
  async record(
    id: string,
    kbid: string,
    kind: TransferKind,
    blobKey: string,
    params: Record<string, unknown>,
    accountId?: string,
  ): Promise<void> {
    // Count and insert under a per-KB lock, so concurrent requests cannot both pass the count.
    await this.ds.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`kb_transfers:${kbid}`]);
      const [waiting] = (await m.query(
        `SELECT count(*)::int AS n FROM content.kb_transfers WHERE kbid = $1 AND status IN ('scheduled', 'running')`,
        [kbid],
      )) as { n: number }[];
      if ((waiting?.n ?? 0) >= MAX_PENDING_PER_KB) {
        throw DomainError.rateLimited(
          `At most ${MAX_PENDING_PER_KB} exports and imports of a Knowledge Box run at once: wait for one to finish`,
          10,
        );
      }
      await m.query(
        `INSERT INTO content.kb_transfers (id, kbid, kind, blob_key, params, account_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
        [id, kbid, kind, blobKey, JSON.stringify(params), accountId ?? null],
      );
    });
    this.kick();
  }

  private async find(kind: 'export' | 'import', ref: KbTransferRef): Promise<TransferRow> {
    const what = kind === 'export' ? 'Export' : 'Import';
    if (!UUID.test(ref.kbid) || !UUID.test(ref.id)) throw new DomainError(ErrorCodes.NOT_FOUND, `${what} not found`);
    const [row] = (await this.ds.query(`SELECT * FROM content.kb_transfers WHERE id = $1 AND kbid = $2 AND kind = $3`, [
      ref.id,
      ref.kbid,
      kind,
    ])) as TransferRow[];
    if (!row) throw new DomainError(ErrorCodes.NOT_FOUND, `${what} not found`);
    return row;
  }

  private kick(): void {
    if (this.pollMs > 0 && !this.running) this.schedule(0);
  }

  private schedule(delay = this.pollMs): void {
    if (this.stop.signal.aborted) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.work()
        .then((more) => {
          this.running = undefined;
          this.schedule(more ? 0 : undefined);
        })
        .catch((err: unknown) => {
          this.running = undefined;
          this.logger.warn({ err: (err as Error).message }, 'KB transfer worker failed');
          this.schedule();
        });
    }, delay);
    this.timer.unref();
  }

  /** Takes one job and runs it; true when it did one (more may wait). */
  private async work(): Promise<boolean> {
    await this.expire();
    const claimed = (await this.ds.query(
      `UPDATE content.kb_transfers SET status = 'running', lease_until = now() + interval '${LEASE_MINUTES} minutes', attempts = attempts + 1
        WHERE id = (SELECT id FROM content.kb_transfers WHERE status = 'scheduled' OR (status = 'running' AND lease_until < now())
                     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
    )) as [TransferRow[], number] | TransferRow[];
    const job = (Array.isArray(claimed[0]) ? claimed[0] : claimed)[0] as TransferRow | undefined;
    if (!job) return false;
    // The lease is renewed while the job runs, so a long check pass is never taken up twice.
    const heartbeat = setInterval(() => {
      this.ds
        .query(
          `UPDATE content.kb_transfers SET lease_until = now() + interval '${LEASE_MINUTES} minutes' WHERE id = $1 AND status = 'running'`,
          [job.id],
        )
        .catch((err: Error) => this.logger.warn({ id: job.id, err: err.message }, 'could not renew a KB transfer lease'));
    }, 60_000);
    heartbeat.unref();
    try {
      // A backup is an export kept for the account.
      if (job.kind === 'import') await this.runImport(job);
      else await this.runExport(job);
    } catch (err) {
      if (this.stop.signal.aborted) {
        // Stopping: the job is handed on at once; its next attempt removes what this one wrote.
        await this.ds.query(`UPDATE content.kb_transfers SET lease_until = now() WHERE id = $1`, [job.id]).catch(() => undefined);
        return false;
      }
      const final = err instanceof ArchiveError || job.attempts >= MAX_ATTEMPTS;
      const message = (err instanceof ArchiveError ? `Invalid archive: ${err.message}` : (err as Error).message).slice(0, 1000);
      this.logger.warn({ id: job.id, kind: job.kind, err: message }, 'KB transfer failed');
      if (job.kind === 'import') await this.importer.undo(job.id, job.kbid);
      if (final) await this.cleanupBlob(job);
      await this.ds.query(
        `UPDATE content.kb_transfers SET status = $2, error = $3, lease_until = NULL, processed = CASE WHEN kind = 'import' THEN 0 ELSE processed END WHERE id = $1`,
        [job.id, final ? 'errored' : 'scheduled', message],
      );
    } finally {
      clearInterval(heartbeat);
    }
    return true;
  }

  private async runExport(job: TransferRow): Promise<void> {
    const total = await this.exporter.count(job.kbid);
    await this.ds.query(`UPDATE content.kb_transfers SET total = $2, processed = 0 WHERE id = $1`, [job.id, total]);
    const exportJob: ExportJob = { id: job.id, kbid: job.kbid, blob_key: job.blob_key, params: job.params as ExportJob['params'] };
    const size = await this.exporter.write(exportJob, (n) => this.progress(job.id, n), this.stop.signal);
    const [updated] = (await this.ds.query(
      `UPDATE content.kb_transfers SET status = 'finished', size_bytes = $2, finished_at = now(), lease_until = NULL, error = NULL WHERE id = $1 RETURNING id`,
      [job.id, size],
    )) as unknown[][];
    // The record went while the file was written (its KB's or account's deletion): so does the file.
    if (!updated || updated.length === 0) await this.cleanupBlob(job);
  }

  private async runImport(job: TransferRow): Promise<void> {
    // A job taken up again first removes what its earlier attempt wrote.
    if (job.attempts > 1) await this.importer.undo(job.id, job.kbid);
    const maxBlob = Number(job.params['max_blob_bytes'] ?? -1);
    const size = Number(job.params['size_bytes'] ?? 0);
    const limits: ArchiveLimits = {
      ...this.limits,
      ...(maxBlob >= 0 ? { maxBlobBytes: Math.min(maxBlob, this.limits.maxBlobBytes) } : {}),
      // A compressed archive inflates by a bounded ratio; far more than that is a bomb.
      maxTotalBytes: Math.min(this.limits.maxTotalBytes, Math.max(1024 ** 3, size * 50)),
    };
    const work = { ...job, signal: this.stop.signal };
    const checked = await this.importer.check(work, limits);
    await this.ds.query(`UPDATE content.kb_transfers SET total = $2, processed = 0 WHERE id = $1`, [job.id, checked.resources]);
    await this.importer.write(work, checked, limits, (n) => this.progress(job.id, n));
    await this.ds.query(`DELETE FROM content.kb_import_resources WHERE import_id = $1`, [job.id]);
    await this.ds.query(
      `UPDATE content.kb_transfers SET status = 'finished', finished_at = now(), lease_until = NULL, error = NULL WHERE id = $1`,
      [job.id],
    );
    await this.cleanupBlob(job);
  }

  private async progress(id: string, processed: number): Promise<void> {
    await this.ds.query(
      `UPDATE content.kb_transfers SET processed = $2, lease_until = now() + interval '${LEASE_MINUTES} minutes' WHERE id = $1`,
      [id, processed],
    );
  }

  /** A staged archive goes once its import is over; a failed export's partial file too. */
  private async cleanupBlob(job: TransferRow): Promise<void> {
    await this.blobs
      .delete(job.blob_key)
      .catch((err: Error) => this.logger.warn({ key: job.blob_key, err: err.message }, 'could not delete a transfer blob'));
  }

  private async expire(): Promise<void> {
    const old = (await this.ds.query(
      `SELECT * FROM content.kb_transfers WHERE created_at < now() - interval '${KEEP_DAYS} days' AND status IN ('finished', 'errored') AND kind <> 'backup' LIMIT 20`,
    )) as TransferRow[];
    for (const o of old) {
      if (o.kind === 'export') await this.cleanupBlob(o);
      await this.ds.query(`DELETE FROM content.kb_transfers WHERE id = $1`, [o.id]);
    }
  }
}
