import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  UnderstandingSubjects,
  type ProcessingStatusPage,
  type ProcessingStatusRecord,
  type ProcessingStatusRequest,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { OutboxRow } from '@kb/platform/outbox';
import type { ProcessingRequestEntity } from '../entities/processing-request.entity';

/** The processing status records for the field jobs among outbox rows (written in the same statement or transaction). */
export function processingRequestsOf(rows: OutboxRow[]): ProcessingRequestEntity[] {
  return rows
    .filter((r) => r.kind === 'queue' && r.target === UnderstandingSubjects.processField.subject)
    .map((r) => {
      const job = r.payload as {
        processing_id: string;
        kbid: string;
        rid: string;
        field_type: string;
        field_id: string;
        seqid: number;
        title?: string;
        labels?: string[];
        webhook?: { uri: string; headers?: Record<string, string>; client: string };
        nua_key_id?: string;
      };
      return {
        processingId: job.processing_id,
        kbid: job.kbid,
        rid: job.rid,
        fieldType: job.field_type,
        fieldId: job.field_id,
        seqid: job.seqid,
        title: job.title ?? '',
        labels: job.labels ?? [],
        scheduledAt: r.createdAt,
        completedAt: null,
        failed: false,
        retries: 0,
        response: null,
        webhook: job.webhook ?? null,
        nuaKeyId: job.nua_key_id ?? null,
      };
    });
}

/** Recent completions (this many minutes) give the rate behind `schedule_eta`. */
const RATE_WINDOW_MINUTES = 5;

interface Cursor {
  at: string;
  id: string;
}

export type SortOn = 'timestamp' | 'scheduled_at' | 'completed_at';

export interface RecordQuery {
  kbids: string[];
  cursor?: string;
  limit?: number;
  scheduled?: boolean;
  sortOn?: SortOn;
  sortOrder?: 'asc' | 'desc';
  processingId?: string;
}

/** Reads processing status records (spec 2.7): of one KB (`GET /kb/{kbid}/processing-status`) or of an account's KBs (the understanding API). */
@Injectable()
export class ProcessingStatusService {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  /** One KB's records, newest first. */
  list(req: ProcessingStatusRequest): Promise<ProcessingStatusPage> {
    return this.query({
      kbids: [req.kbid],
      cursor: req.cursor,
      limit: req.limit,
      scheduled: req.scheduled,
      sortOn: 'scheduled_at',
      sortOrder: 'desc',
    });
  }

  /** One record, if it belongs to one of `kbids`. */
  async get(kbids: string[], processingId: string): Promise<ProcessingStatusRecord> {
    const page = await this.query({ kbids, processingId, limit: 1 });
    const found = page.results[0];
    if (!found) throw new DomainError(ErrorCodes.NOT_FOUND, 'Processing request not found');
    return found;
  }

  /** The processing ids of the jobs one write of a resource scheduled, in field order (type, then id). */
  async jobsOfWrite(rid: string, seqid: number): Promise<string[]> {
    const rows = (await this.ds.query(
      `SELECT processing_id FROM content.processing_requests WHERE rid = $1 AND seqid = $2 ORDER BY field_type, field_id`,
      [rid, seqid],
    )) as { processing_id: string }[];
    return rows.map((r) => r.processing_id);
  }

  /**
   * Records of `kbids` in the order asked (a pending job sorts last by completed_at ascending,
   * first descending). `schedule_order` is the position among every job still waiting, in any KB
   * (one shared queue).
   */
  async query(q: RecordQuery): Promise<ProcessingStatusPage> {
    const limit = q.limit ?? 20;
    if (q.scheduled === false || q.kbids.length === 0) return { results: [], cursor: null }; // every job is scheduled when its write commits
    const key = q.sortOn === 'completed_at' ? `coalesce(r.completed_at, 'infinity'::timestamptz)` : 'r.scheduled_at';
    const dir = q.sortOrder === 'desc' ? 'DESC' : 'ASC';
    const params: unknown[] = [q.kbids, limit + 1];
    let where = 'r.kbid = ANY($1::uuid[])';
    if (q.processingId) {
      params.push(q.processingId);
      where += ` AND r.processing_id = $${params.length}`;
    }
    if (q.cursor) {
      const after = decodeCursor(q.cursor);
      params.push(after.at, after.id);
      where += ` AND (${key}, r.processing_id) ${dir === 'DESC' ? '<' : '>'} ($${params.length - 1}::timestamptz, $${params.length}::text)`;
    }
    const rows = (await this.ds.query(
      `WITH waiting AS (
         SELECT processing_id, row_number() OVER (ORDER BY scheduled_at, processing_id) AS position
           FROM content.processing_requests WHERE completed_at IS NULL),
       rate AS (
         SELECT count(*)::float8 / ${RATE_WINDOW_MINUTES * 60} AS per_s FROM content.processing_requests
          WHERE completed_at > now() - interval '${RATE_WINDOW_MINUTES} minutes')
       SELECT r.processing_id, r.rid, r.kbid, r.field_type, r.field_id, r.title, r.labels, r.scheduled_at, r.completed_at, r.failed, r.retries, r.response,
              coalesce(w.position, 0)::int AS position, rate.per_s, to_json(${key}) #>> '{}' AS sort_key
         FROM content.processing_requests r CROSS JOIN rate LEFT JOIN waiting w ON w.processing_id = r.processing_id
        WHERE ${where}
        ORDER BY ${key} ${dir}, r.processing_id ${dir}
        LIMIT $2`,
      params,
    )) as Row[];
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      results: page.map(toRecord),
      cursor: rows.length > limit && last ? encodeCursor({ at: last.sort_key, id: last.processing_id }) : null,
    };
  }
}

interface Row {
  processing_id: string;
  rid: string;
  kbid: string;
  field_type: string;
  field_id: string;
  title: string;
  labels: string[];
  scheduled_at: string | Date;
  completed_at: string | Date | null;
  failed: boolean;
  retries: number;
  response: string | null;
  position: number;
  per_s: number;
  sort_key: string;
}

function toRecord(r: Row): ProcessingStatusRecord {
  const scheduledAt = new Date(r.scheduled_at).toISOString();
  const position = Number(r.position);
  // Jobs ahead of this one divided by the recent completion rate; unknown (no recent completion) counts as 0.
  const eta = position > 1 && r.per_s > 0 ? Math.round((position - 1) / r.per_s) : 0;
  return {
    processing_id: r.processing_id,
    resource_id: r.rid,
    kbid: r.kbid,
    title: r.title,
    labels: r.labels ?? [],
    completed: r.completed_at !== null,
    scheduled: true,
    timestamp: scheduledAt,
    completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null,
    scheduled_at: scheduledAt,
    failed: r.failed,
    retries: r.retries,
    schedule_eta: eta,
    schedule_order: position,
    request: `${r.field_type}/${r.field_id}`,
    response: r.response ?? '',
  };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (typeof c.at === 'string' && (c.at === 'infinity' || !Number.isNaN(Date.parse(c.at))) && typeof c.id === 'string') return c;
  } catch {
    // reported below
  }
  throw DomainError.validation([{ loc: ['query', 'cursor'], msg: 'Invalid cursor', type: 'value_error' }]);
}
