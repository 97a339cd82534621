import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuditRecordedEvent, CountAuditEventsRequest, ListAuditEventsRequest } from '@kb/contracts';
import { Coalescer } from '@kb/platform/messaging';
import { REPORTING_DATA_SOURCE } from '../reporting.tokens';

function monthRange(month: string): [string, string] {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return [new Date(Date.UTC(y, m - 1, 1)).toISOString(), new Date(Date.UTC(y, m, 1)).toISOString()];
}

/** Stores audit events exactly once (JetStream may redeliver) and answers simple queries. */
@Injectable()
export class AuditService {
  constructor(@Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource) {}

  record(e: AuditRecordedEvent): Promise<void> {
    return this.inserts.submit(e);
  }

  /** Events recorded while an insert runs go together in the next one (see Coalescer). */
  private readonly inserts = new Coalescer<AuditRecordedEvent, void>(async (events) => {
    const rows = events.map((e) => ({
      event_id: e.event_id, kbid: e.kbid, type: e.type, date: e.date, user_id: e.user_id ?? null, user_type: e.user_type ?? null, client_type: e.client_type ?? null,
      total_duration: e.total_duration ?? null, resource_id: e.resource_id ?? null, audit_metadata: e.audit_metadata ?? {},
    }));
    await this.ds.query(
      `INSERT INTO reporting.audit_events (event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata)
       SELECT event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata
         FROM jsonb_to_recordset($1::jsonb) AS t(event_id text, kbid uuid, type text, date timestamptz, user_id text, user_type text, client_type text, total_duration integer, resource_id text, audit_metadata jsonb)
       ON CONFLICT (event_id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
    return events.map(() => undefined);
  });

  async count(req: CountAuditEventsRequest): Promise<{ count: number }> {
    const { sql, params } = this.where(req);
    const rows: { n: string }[] = await this.ds.query(`SELECT count(*) AS n FROM reporting.audit_events WHERE ${sql}`, params);
    return { count: Number(rows[0]?.n ?? 0) };
  }

  async list(req: ListAuditEventsRequest): Promise<AuditRecordedEvent[]> {
    const { sql, params } = this.where(req);
    const rows: Record<string, unknown>[] = await this.ds.query(
      `SELECT event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata FROM reporting.audit_events WHERE ${sql} ORDER BY id LIMIT 1000`,
      params,
    );
    return rows.map((r) => ({
      event_id: String(r['event_id']), kbid: String(r['kbid']), type: r['type'] as AuditRecordedEvent['type'], date: new Date(r['date'] as string).toISOString(),
      ...(r['user_id'] ? { user_id: String(r['user_id']) } : {}), ...(r['user_type'] ? { user_type: String(r['user_type']) } : {}),
      ...(r['client_type'] ? { client_type: String(r['client_type']) } : {}), ...(r['total_duration'] !== null ? { total_duration: Number(r['total_duration']) } : {}),
      ...(r['resource_id'] ? { resource_id: String(r['resource_id']) } : {}), audit_metadata: r['audit_metadata'] as Record<string, unknown>,
    }));
  }

  private where(req: CountAuditEventsRequest): { sql: string; params: unknown[] } {
    const clauses = ['kbid = $1'];
    const params: unknown[] = [req.kbid];
    if (req.type) {
      params.push(req.type);
      clauses.push(`type = $${params.length}`);
    }
    if (req.month) {
      const [from, to] = monthRange(req.month);
      params.push(from, to);
      clauses.push(`date >= $${params.length - 1} AND date < $${params.length}`);
    }
    return { sql: clauses.join(' AND '), params };
  }
}
