import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DomainError, UnderstandingSubjects, type ProcessingStatusPage, type ProcessingStatusRecord, type ProcessingStatusRequest } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { OutboxEntity } from '../entities/outbox.entity';
import type { ProcessingRequestEntity } from '../entities/processing-request.entity';

/** The processing status records for the field jobs among outbox rows (written in the same statement or transaction). */
export function processingRequestsOf(rows: OutboxEntity[]): ProcessingRequestEntity[] {
  return rows
    .filter((r) => r.kind === 'queue' && r.target === UnderstandingSubjects.processField.subject)
    .map((r) => {
      const job = r.payload as { processing_id: string; kbid: string; rid: string; field_type: string; field_id: string; seqid: number; title?: string };
      return {
        processingId: job.processing_id, kbid: job.kbid, rid: job.rid, fieldType: job.field_type, fieldId: job.field_id, seqid: job.seqid,
        title: job.title ?? '', labels: [], scheduledAt: r.createdAt, completedAt: null, failed: false, retries: 0, response: null,
      };
    });
}

/** Recent completions (this many minutes) give the rate behind `schedule_eta`. */
const RATE_WINDOW_MINUTES = 5;

interface Cursor { at: string; id: string }

/** Reads the processing status records of a KB (spec 2.7, `GET /kb/{kbid}/processing-status`). */
@Injectable()
export class ProcessingStatusService {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  /** Newest first; `schedule_order` is the position among every job still waiting, in any KB (one shared queue). */
  async list(req: ProcessingStatusRequest): Promise<ProcessingStatusPage> {
    const limit = req.limit ?? 20;
    if (req.scheduled === false) return { results: [], cursor: null }; // every job is scheduled when its write commits
    const after = req.cursor ? decodeCursor(req.cursor) : undefined;
    const params: unknown[] = [req.kbid, limit + 1];
    let where = 'r.kbid = $1';
    if (after) {
      params.push(after.at, after.id);
      where += ` AND (r.scheduled_at, r.processing_id) < ($3::timestamptz, $4::text)`;
    }
    const rows = (await this.ds.query(
      `WITH waiting AS (
         SELECT processing_id, row_number() OVER (ORDER BY scheduled_at, processing_id) AS position
           FROM content.processing_requests WHERE completed_at IS NULL),
       rate AS (
         SELECT count(*)::float8 / ${RATE_WINDOW_MINUTES * 60} AS per_s FROM content.processing_requests
          WHERE completed_at > now() - interval '${RATE_WINDOW_MINUTES} minutes')
       SELECT r.processing_id, r.rid, r.kbid, r.field_type, r.field_id, r.title, r.labels, r.scheduled_at, r.completed_at, r.failed, r.retries, r.response,
              coalesce(w.position, 0)::int AS position, rate.per_s
         FROM content.processing_requests r CROSS JOIN rate LEFT JOIN waiting w ON w.processing_id = r.processing_id
        WHERE ${where}
        ORDER BY r.scheduled_at DESC, r.processing_id DESC
        LIMIT $2`,
      params,
    )) as Row[];
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      results: page.map(toRecord),
      cursor: rows.length > limit && last ? encodeCursor({ at: new Date(last.scheduled_at).toISOString(), id: last.processing_id }) : null,
    };
  }
}

interface Row {
  processing_id: string; rid: string; kbid: string; field_type: string; field_id: string; title: string; labels: string[];
  scheduled_at: string | Date; completed_at: string | Date | null; failed: boolean; retries: number; response: string | null; position: number; per_s: number;
}

function toRecord(r: Row): ProcessingStatusRecord {
  const scheduledAt = new Date(r.scheduled_at).toISOString();
  const position = Number(r.position);
  // Jobs ahead of this one divided by the recent completion rate; unknown (no recent completion) counts as 0.
  const eta = position > 1 && r.per_s > 0 ? Math.round((position - 1) / r.per_s) : 0;
  return {
    processing_id: r.processing_id, resource_id: r.rid, kbid: r.kbid, title: r.title, labels: r.labels ?? [],
    completed: r.completed_at !== null, scheduled: true, timestamp: scheduledAt,
    completed_at: r.completed_at ? new Date(r.completed_at).toISOString() : null, scheduled_at: scheduledAt,
    failed: r.failed, retries: r.retries, schedule_eta: eta, schedule_order: position,
    request: `${r.field_type}/${r.field_id}`, response: r.response ?? '',
  };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (typeof c.at === 'string' && !Number.isNaN(Date.parse(c.at)) && typeof c.id === 'string') return c;
  } catch {
    // reported below
  }
  throw DomainError.validation([{ loc: ['query', 'cursor'], msg: 'Invalid cursor', type: 'value_error' }]);
}
