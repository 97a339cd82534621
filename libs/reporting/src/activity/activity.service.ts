import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AuditEventTypes,
  DomainError,
  ErrorCodes,
  type ActivityMonthsRequest,
  type ActivityQueryItem,
  type ActivityQueryRequest,
  type ActivityRecord,
  type AuditEventType,
} from '@kb/contracts';
import { REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { activityQuerySql, type ShownColumn } from './activity-query';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Postgres `query_canceled`: the statement timeout fired. */
const QUERY_CANCELED = '57014';

/** Query Knowledgebox Activity Logs and the months with activity (spec 4.4). */
@Injectable()
export class ActivityService {
  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
  ) {}

  /** A page of records, after an item saying whether more follow (the request was checked by its contract on the bus). */
  async *query(req: ActivityQueryRequest, signal?: AbortSignal): AsyncIterable<ActivityQueryItem> {
    const q = activityQuerySql(req.kbid, req.event_type, req.body);
    if (!UUID.test(req.kbid)) {
      yield { type: 'page', has_more: false };
      return;
    }
    const select = q.columns.map((c, i) => `${c.sql} AS c${i}`).join(', ');
    const rows = await this.withTimeout<Row[]>(async (run) =>
      run(
        `SELECT ${select} FROM reporting.activity_events e
          WHERE e.kbid = $1::uuid AND e.type = $2 AND e.date >= $3::timestamptz AND e.date < $4::timestamptz${q.sql ? ` AND ${q.sql}` : ''}
          ORDER BY e.id ${q.descending ? 'DESC' : 'ASC'} LIMIT ${q.limit + 1}`,
        q.params,
      ),
    );
    const hasMore = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    if (q.descending) page.reverse();
    yield { type: 'page', has_more: hasMore };
    for (const row of page) {
      if (signal?.aborted) return;
      yield { type: 'record', record: toRecord(q.columns, row) };
    }
  }

  async months(req: ActivityMonthsRequest): Promise<{ downloads: string[] }> {
    const type = req.event_type.toLowerCase() as AuditEventType;
    if (!AuditEventTypes.includes(type)) {
      throw DomainError.validation([
        { loc: ['path', 'event_type'], msg: `Input should be ${AuditEventTypes.map((t) => `'${t}'`).join(', ')}`, type: 'enum' },
      ]);
    }
    if (!UUID.test(req.kbid)) return { downloads: [] };
    const rows: { month: string }[] = await this.ds.query(
      `SELECT month FROM reporting.activity_months WHERE kbid = $1::uuid AND type = $2 ORDER BY month`,
      [req.kbid, type],
    );
    return { downloads: rows.map((r) => r.month) };
  }

  /**
   * Runs a statement under the activity query time limit (ACTIVITY_QUERY_TIMEOUT_MS): filters are
   * the caller's, and a pattern or range that would scan for long is stopped by the server.
   */
  private async withTimeout<T>(work: (run: (sql: string, params: unknown[]) => Promise<T>) => Promise<T>): Promise<T> {
    try {
      return await this.ds.transaction(async (m) => {
        await m.query(`SELECT set_config('statement_timeout', $1, true)`, [String(this.options.activityQueryTimeoutMs)]);
        return work((sql, params) => m.query(sql, params));
      });
    } catch (err) {
      if ((err as { code?: string }).code === QUERY_CANCELED) {
        throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'The activity query took too long: narrow its filters');
      }
      throw err;
    }
  }
}

/** A row as the database answers it: one value per shown column, `c0`, `c1`, … */
type Row = Record<`c${number}`, unknown>;

function toRecord(columns: ShownColumn[], row: Row): ActivityRecord {
  const out: ActivityRecord = {};
  columns.forEach((c, i) => {
    const v = row[`c${i}`];
    if (v === null || v === undefined) out[c.name] = null;
    else if (c.kind === 'int') out[c.name] = Number(v);
    else if (c.kind === 'date') out[c.name] = new Date(v as string).toISOString();
    else out[c.name] = v;
  });
  return out;
}
