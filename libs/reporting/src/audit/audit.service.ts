import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';

type Queryable = Pick<DataSource | EntityManager, 'query'>;
import type { AuditRecordedEvent, CountAuditEventsRequest, ListAuditEventsRequest } from '@kb/contracts';
import { Coalescer } from '@kb/platform/messaging';
import { REPORTING_DATA_SOURCE } from '../reporting.tokens';
import { feedbackRow, isFeedbackEvent, mergeFeedback, recordDetails, type FeedbackRow } from './activity-record';
import { ensureMonthPartition, monthOf, monthRange } from './partitions';

/**
 * An event waits this long for others before its batch is stored: events come from the queue one
 * by one, and a statement per two or three events cost the standalone's one database thread more
 * than the events themselves (docs/benchmarks.md, issue 16).
 */
export const AUDIT_LINGER_MS = 25;

const COLUMNS =
  'event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata, details, learning_id';

/**
 * Stores audit events exactly once (JetStream may redeliver: a redelivery has the same id and
 * date, and `(event_id, date)` is unique) with their details, merges `/feedback` into its chat
 * record, and answers simple queries.
 */
@Injectable()
export class AuditService {
  /** Months whose partition this process has seen created. */
  private readonly partitions = new Set<string>();
  /** `kbid/type/month` triples this process has listed in activity_months. */
  private readonly knownMonths = new Set<string>();

  constructor(@Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource) {}

  record(e: AuditRecordedEvent): Promise<void> {
    return this.inserts.submit(e);
  }

  /** Events recorded while an insert runs go together in the next one (see Coalescer); a failed batch is retried event by event. */
  private readonly inserts = new Coalescer<AuditRecordedEvent, void>(
    async (batch) => {
      // A redelivery in the same batch as its first delivery is the same event: it goes in (and counts) once.
      const seen = new Set<string>();
      const events = batch.filter((e) => {
        const key = `${e.event_id}@${new Date(e.date).getTime()}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      const rows = events
        .filter((e) => !isFeedbackEvent(e))
        .map((e) => {
          const { details, learning_id } = recordDetails(e);
          return {
            event_id: e.event_id,
            kbid: e.kbid,
            type: e.type,
            date: new Date(e.date).toISOString(),
            user_id: e.user_id ?? null,
            user_type: e.user_type ?? null,
            client_type: e.client_type ?? null,
            total_duration: e.total_duration ?? null,
            resource_id: e.resource_id ?? null,
            audit_metadata: e.audit_metadata ?? {},
            details,
            learning_id,
            month: monthOf(e.date),
          };
        });
      const feedback = new Map<string, FeedbackRow>();
      for (const e of events.filter(isFeedbackEvent)) {
        const f = feedbackRow(e);
        if (!f) continue;
        const key = `${f.kbid}/${f.learning_id}`;
        const known = feedback.get(key);
        feedback.set(key, known ? { ...f, feedback: mergeFeedback(known.feedback, f.feedback) } : f);
      }
      for (const month of new Set(rows.map((r) => r.month))) {
        if (this.partitions.has(month)) continue;
        // Outside the insert's transaction: creating a partition locks the parent table briefly, once a month.
        await ensureMonthPartition(this.ds, month);
        this.partitions.add(month);
      }
      // Whichever came second (the answer or its feedback) completes the chat record.
      const pairs = [
        ...rows.filter((r) => r.learning_id).map((r) => ({ kbid: r.kbid, learning_id: r.learning_id })),
        ...[...feedback.values()].map(({ kbid, learning_id }) => ({ kbid, learning_id })),
      ];
      const insert = (m: Queryable) => (rows.length > 0 ? this.insertEvents(m, rows) : Promise.resolve({ months: [] as string[] }));
      // The common batch (no answers, no feedback) is one statement: in the standalone every statement
      // is a turn of the one database thread that also serves the writes (docs/benchmarks.md, issue 16).
      const done =
        feedback.size === 0 && pairs.length === 0
          ? await insert(this.ds)
          : await this.ds.transaction(async (m) => {
              const inserted = await insert(m);
              if (feedback.size > 0) {
                await m.query(
                  `INSERT INTO reporting.chat_feedback AS c (kbid, learning_id, feedback)
                 SELECT kbid, learning_id, feedback FROM jsonb_to_recordset($1::jsonb) AS t(kbid uuid, learning_id text, feedback jsonb)
                  WHERE NOT EXISTS (SELECT 1 FROM reporting.deleted_kbs d WHERE d.kbid = t.kbid)
                 ON CONFLICT (kbid, learning_id) DO UPDATE SET feedback = CASE
                   WHEN c.feedback ? 'text_blocks' OR EXCLUDED.feedback ? 'text_blocks'
                   THEN (c.feedback || (EXCLUDED.feedback - 'text_blocks'))
                        || jsonb_build_object('text_blocks', COALESCE(c.feedback -> 'text_blocks', '{}'::jsonb) || COALESCE(EXCLUDED.feedback -> 'text_blocks', '{}'::jsonb))
                   ELSE c.feedback || EXCLUDED.feedback END`,
                  [JSON.stringify([...feedback.values()])],
                );
              }
              if (pairs.length > 0) {
                await m.query(
                  `UPDATE reporting.activity_events e SET feedback = f.feedback
                   FROM reporting.chat_feedback f, jsonb_to_recordset($1::jsonb) AS t(kbid uuid, learning_id text)
                  WHERE f.kbid = t.kbid AND f.learning_id = t.learning_id AND e.kbid = f.kbid AND e.learning_id = f.learning_id AND e.type = 'chat'
                    AND e.feedback IS DISTINCT FROM f.feedback`,
                  [JSON.stringify(pairs)],
                );
              }
              return inserted;
            });
      // Listed once committed (a batch rolled back lists nothing).
      for (const key of done.months) this.knownMonths.add(key);
      return batch.map(() => undefined);
    },
    256,
    { lingerMs: AUDIT_LINGER_MS },
  );

  /**
   * One statement: the events (each once: a stored one is not stored again) and the months they
   * fall in. Usage is metered when the sealer seals them (ChainSealerService), exactly once each.
   */
  private async insertEvents(m: Queryable, rows: { kbid: string; type: string; month: string }[]): Promise<{ months: string[] }> {
    // The months a KB has events of a type in, inserted once per process: nearly every batch falls in months already listed.
    if (this.knownMonths.size > 100_000) this.knownMonths.clear();
    const months = [
      ...new Map(rows.map((r) => [`${r.kbid}/${r.type}/${r.month}`, { kbid: r.kbid, type: r.type, month: r.month }])).entries(),
    ]
      .filter(([key]) => !this.knownMonths.has(key))
      .map(([, v]) => v);
    await m.query(
      `WITH months AS (
         INSERT INTO reporting.activity_months (kbid, type, month)
         SELECT kbid, type, month FROM jsonb_to_recordset($2::jsonb) AS m(kbid uuid, type text, month text)
          WHERE NOT EXISTS (SELECT 1 FROM reporting.deleted_kbs d WHERE d.kbid = m.kbid)
         ON CONFLICT DO NOTHING
       )
       INSERT INTO reporting.activity_events (${COLUMNS})
       SELECT ${COLUMNS} FROM jsonb_to_recordset($1::jsonb) AS t(event_id text, kbid uuid, type text, date timestamptz, user_id text, user_type text, client_type text,
                                                               total_duration integer, resource_id text, audit_metadata jsonb, details jsonb, learning_id text, ord integer)
        -- An event of a KB deleted meanwhile (late in the bus) is not stored again (KbCleanupService).
        WHERE NOT EXISTS (SELECT 1 FROM reporting.deleted_kbs d WHERE d.kbid = t.kbid)
        -- Ids in the batch's order: the anti-join above may reorder rows.
        ORDER BY t.ord
       ON CONFLICT (event_id, date) DO NOTHING`,
      [JSON.stringify(rows.map((r, ord) => ({ ...r, ord }))), JSON.stringify(months)],
    );
    return { months: months.map((m) => `${m.kbid}/${m.type}/${m.month}`) };
  }

  async count(req: CountAuditEventsRequest): Promise<{ count: number }> {
    const { sql, params } = this.where(req);
    const rows: { n: string }[] = await this.ds.query(`SELECT count(*) AS n FROM reporting.activity_events WHERE ${sql}`, params);
    return { count: Number(rows[0]?.n ?? 0) };
  }

  async list(req: ListAuditEventsRequest): Promise<AuditRecordedEvent[]> {
    const { sql, params } = this.where(req);
    const rows: Record<string, unknown>[] = await this.ds.query(
      `SELECT event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata, details, feedback
         FROM reporting.activity_events WHERE ${sql} ORDER BY id LIMIT 1000`,
      params,
    );
    return rows.map((r) => {
      const details = { ...(r['details'] as Record<string, unknown>), ...(r['feedback'] ? { feedback: r['feedback'] } : {}) };
      return {
        event_id: String(r['event_id']),
        kbid: String(r['kbid']),
        type: r['type'] as AuditRecordedEvent['type'],
        date: new Date(r['date'] as string).toISOString(),
        ...(r['user_id'] ? { user_id: String(r['user_id']) } : {}),
        ...(r['user_type'] ? { user_type: String(r['user_type']) } : {}),
        ...(r['client_type'] ? { client_type: String(r['client_type']) } : {}),
        ...(r['total_duration'] !== null ? { total_duration: Number(r['total_duration']) } : {}),
        ...(r['resource_id'] ? { resource_id: String(r['resource_id']) } : {}),
        audit_metadata: r['audit_metadata'] as Record<string, unknown>,
        ...(Object.keys(details).length > 0 ? { details } : {}),
      };
    });
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
