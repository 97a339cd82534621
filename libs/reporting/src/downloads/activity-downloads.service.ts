import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  type ActivityCsvChunk,
  type ActivityDownloadDto,
  type ActivityDownloadRef,
  type ActivityMonthDownloadRequest,
  type RequestActivityDownloadRequest,
  type ActivityDownloadQuery,
  type ActivityRecord,
  type AuditEventType,
  type ValidationIssue,
  activityBodyOf,
  ActivityDownloadBody,
  AuditEventTypes,
  validatePayload,
} from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { ActivityService } from '../activity/activity.service';
import { shownColumns } from '../activity/activity-query';
import { REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { allRecords, csvText, ndjsonText } from './activity-files';
import { DownloadMailer } from './download-mailer';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A download link is valid this long from the status answer that gave it. */
const LINK_SECONDS = 3600;
/** A file is kept this long after it was written, then deleted with its request. */
const KEEP_DAYS = 7;
/** A job whose process died is taken up again after this long; after this many tries it fails. */
const LEASE_MINUTES = 10;
const MAX_ATTEMPTS = 3;
/** The link in the e-mail notice of a ready download is valid this long (a status answer gives a fresh one). */
const MAIL_LINK_SECONDS = 24 * 3600;
const eventTypeIssue: ValidationIssue = {
  loc: ['path', 'event_type'],
  msg: `Input should be ${AuditEventTypes.map((t) => `'${t}'`).join(', ')}`,
  type: 'enum',
};
/** Requests waiting per KB: more is refused (429) until some are done. */
const MAX_PENDING_PER_KB = 5;

interface DownloadRow {
  request_id: string;
  kbid: string;
  event_type: string;
  format: 'ndjson' | 'csv';
  /** The checked body of the request, without the notice members. */
  query: ActivityDownloadQuery;
  requested_at: Date | string;
  status: ActivityDownloadDto['status'];
  attempts: number;
  blob_key: string | null;
  records: number | null;
  size_bytes: string | number | null;
  error: string | null;
  email_address: string | null;
  notify: boolean;
  notified_at: Date | string | null;
}

/**
 * Activity log downloads (spec 4.4): Request The Preparation Of Knowledgebox Activity Logs Download
 * records the query; a background job (one at a time per reporting process, leased so a crashed
 * one is taken up again) writes every matching record as NDJSON or CSV to the blob store; Get
 * Download Status answers with a link once the file is there (presigned: S3's own, or the gateway's
 * signed route for the fs driver). Files are kept KEEP_DAYS days. The legacy month download streams
 * CSV directly.
 */
@Injectable()
export class ActivityDownloadsService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ActivityDownloads');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly stop = new AbortController();
  private readonly mailer?: DownloadMailer;

  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly activity: ActivityService,
  ) {
    if (options.smtp) this.mailer = new DownloadMailer(options.smtp);
  }

  onModuleInit(): void {
    if (this.options.downloadPollMs > 0) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.mailer?.close();
  }

  /** Records a download (the body was checked by its contract on the bus; whether e-mail can be sent only this service knows). */
  async request(req: RequestActivityDownloadRequest): Promise<ActivityDownloadDto> {
    const { email_address: email, notify_via_email: notify, pagination: _none, ...query } = req.body;
    if (notify === true && !this.mailer) {
      throw DomainError.validation([
        {
          loc: ['body', 'notify_via_email'],
          msg: 'E-mail notification of downloads is not available: poll Get Download Status for the link',
          type: 'value_error',
        },
      ]);
    }
    if (!UUID.test(req.kbid)) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
    // Count and insert under a per-KB lock, so concurrent requests cannot both pass the count.
    const rows = await this.ds.transaction(async (m): Promise<DownloadRow[]> => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`activity_downloads:${req.kbid}`]);
      const [waiting] = (await m.query(
        `SELECT count(*)::int AS n FROM reporting.activity_downloads WHERE kbid = $1 AND status IN ('pending', 'running')`,
        [req.kbid],
      )) as { n: number }[];
      if ((waiting?.n ?? 0) >= MAX_PENDING_PER_KB) {
        throw DomainError.rateLimited(
          `At most ${MAX_PENDING_PER_KB} downloads of a Knowledge Box are prepared at once: wait for one to finish`,
          10,
        );
      }
      return m.query(
        `INSERT INTO reporting.activity_downloads (request_id, kbid, event_type, format, query, email_address, notify) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7) RETURNING *`,
        [
          randomUUID(),
          req.kbid,
          req.event_type,
          req.format,
          JSON.stringify(query satisfies ActivityDownloadQuery),
          email ?? null,
          notify === true,
        ],
      );
    });
    this.kick();
    return this.dto(rows[0] as DownloadRow);
  }

  async status(ref: ActivityDownloadRef): Promise<ActivityDownloadDto> {
    if (!UUID.test(ref.kbid) || !UUID.test(ref.request_id)) throw new DomainError(ErrorCodes.NOT_FOUND, 'Download request not found');
    const [row] = (await this.ds.query(`SELECT * FROM reporting.activity_downloads WHERE request_id = $1 AND kbid = $2`, [
      ref.request_id,
      ref.kbid,
    ])) as DownloadRow[];
    if (!row) throw new DomainError(ErrorCodes.NOT_FOUND, 'Download request not found');
    return this.dto(row);
  }

  /** Download Knowledgebox Activity (legacy): every member of one month's records of one type, as CSV. */
  async *monthCsv(req: ActivityMonthDownloadRequest, signal?: AbortSignal): AsyncIterable<ActivityCsvChunk> {
    const type = req.event_type.toLowerCase() as AuditEventType;
    if (!AuditEventTypes.includes(type)) throw DomainError.validation([eventTypeIssue]);
    const query: ActivityDownloadQuery = { year_month: req.month, show: 'all', filters: {} };
    const columns = shownColumns(query.show, type);
    if (!UUID.test(req.kbid)) {
      yield { text: '' };
      return;
    }
    for await (const text of csvText(
      columns.map((c) => c.name),
      allRecords(this.activity, req.kbid, type, query, signal),
    )) {
      if (signal?.aborted) return;
      yield { text };
    }
  }

  /** Runs the jobs now (tests; the worker also polls). */
  async drain(): Promise<void> {
    while (await this.work()) {
      // one job per turn
    }
  }

  private kick(): void {
    if (this.options.downloadPollMs > 0 && !this.running) this.schedule(0);
  }

  private schedule(delay = this.options.downloadPollMs): void {
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
          this.logger.warn(`activity downloads failed: ${(err as Error).message}`);
          this.schedule();
        });
    }, delay);
    this.timer.unref();
  }

  /** Takes one job and writes its file; true when it did one (more may wait). Old files are deleted on the way. */
  private async work(): Promise<boolean> {
    await this.expire();
    // TypeORM answers an UPDATE … RETURNING on PostgreSQL with [rows, affected].
    const claimed = (await this.ds.query(
      `UPDATE reporting.activity_downloads SET status = 'running', lease_until = now() + interval '${LEASE_MINUTES} minutes', attempts = attempts + 1
        WHERE request_id = (SELECT request_id FROM reporting.activity_downloads
                             WHERE status = 'pending' OR (status = 'running' AND lease_until < now())
                             ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
    )) as [DownloadRow[], number] | DownloadRow[];
    const rows = (Array.isArray(claimed[0]) ? claimed[0] : claimed) as DownloadRow[];
    const job = rows[0];
    if (!job) return false;
    try {
      await this.write(job);
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      this.logger.warn(`activity download ${job.request_id} failed: ${message}`);
      await this.ds.query(
        `UPDATE reporting.activity_downloads SET status = CASE WHEN attempts >= $2 THEN 'failed' ELSE 'pending' END, error = $3, lease_until = NULL WHERE request_id = $1`,
        [job.request_id, MAX_ATTEMPTS, message],
      );
    }
    return true;
  }

  private async write(job: DownloadRow): Promise<void> {
    // The stored query, checked again by the contract of its type (it may predate a change of it).
    const type = job.event_type as AuditEventType;
    const query = validatePayload(activityBodyOf(ActivityDownloadBody, type), job.query);
    const columns = shownColumns(query.show, type);
    let count = 0;
    const records = (async function* (source: AsyncIterable<ActivityRecord>) {
      for await (const r of source) {
        count++;
        yield r;
      }
    })(allRecords(this.activity, job.kbid, type, query, this.stop.signal));
    const text =
      job.format === 'csv'
        ? csvText(
            columns.map((c) => c.name),
            records,
          )
        : ndjsonText(records);
    const key = `reporting/kbs/${job.kbid}/activity-downloads/${job.request_id}.${job.format}`;
    const stat = await this.blobs.put(key, Readable.from(text), {
      contentType: job.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
    });
    if (this.stop.signal.aborted) throw new Error('stopped before the file was complete');
    await this.ds.query(
      `UPDATE reporting.activity_downloads SET status = 'done', blob_key = $2, records = $3, size_bytes = $4, finished_at = now(), lease_until = NULL, error = NULL WHERE request_id = $1`,
      [job.request_id, key, count, stat.size],
    );
    if (job.notify && job.email_address) await this.notify(job, key, count);
  }

  /**
   * The e-mail notice: sent once the file is complete, to the address given with the request. A
   * failed send is logged and not retried (the file and Get Download Status are unaffected).
   */
  private async notify(job: DownloadRow, key: string, records: number): Promise<void> {
    if (!this.mailer || !job.email_address) return;
    const month = job.query.year_month;
    const expires = new Date(Date.now() + MAIL_LINK_SECONDS * 1000);
    try {
      const link = await this.blobs.presignGet(key, {
        expiresInSeconds: MAIL_LINK_SECONDS,
        filename: `activity-${job.event_type}-${month}.${job.format}`,
      });
      await this.mailer.send({ to: job.email_address, eventType: job.event_type, month, link, expires, records });
      await this.ds.query(`UPDATE reporting.activity_downloads SET notified_at = now() WHERE request_id = $1`, [job.request_id]);
    } catch (err) {
      this.logger.warn(`the e-mail notice of activity download ${job.request_id} was not sent: ${(err as Error).message}`);
    }
  }

  /** Files older than KEEP_DAYS go, with their requests (a few per turn). */
  private async expire(): Promise<void> {
    const old: { request_id: string; blob_key: string | null }[] = await this.ds.query(
      `SELECT request_id, blob_key FROM reporting.activity_downloads WHERE requested_at < now() - interval '${KEEP_DAYS} days' AND status IN ('done', 'failed') LIMIT 20`,
    );
    for (const o of old) {
      if (o.blob_key) await this.blobs.delete(o.blob_key);
      await this.ds.query(`DELETE FROM reporting.activity_downloads WHERE request_id = $1`, [o.request_id]);
    }
  }

  private async dto(row: DownloadRow): Promise<ActivityDownloadDto> {
    const month = row.query.year_month;
    const url =
      row.status === 'done' && row.blob_key
        ? await this.blobs.presignGet(row.blob_key, {
            expiresInSeconds: LINK_SECONDS,
            filename: `activity-${row.event_type}-${month}.${row.format}`,
          })
        : null;
    return {
      request_id: row.request_id,
      download_type: 'query',
      download_format: row.format,
      event_type: row.event_type,
      requested_at: new Date(row.requested_at).toISOString(),
      kb_id: row.kbid,
      download_url: url,
      status: row.status,
      records: row.records ?? null,
      size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
      error: row.status === 'failed' ? row.error : null,
    };
  }
}
