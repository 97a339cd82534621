import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ensureMonthPartition } from '../audit/partitions';

/**
 * The activity log as a table partitioned by UTC month (issue 19): a month's query reads one
 * partition, old months can be detached or dropped whole, and a KB's rows within a month are one
 * range of the `(kbid, type, id)` index (deleting a KB's events is an index range per month, not a
 * scan). Partitioning by KB as well would mean a table per KB and month; the index gives the same
 * locality without that. Uniqueness must include the partition key, so an event is unique by
 * `(event_id, date)`: a redelivery carries the same payload, hence the same date, and is stored once.
 * `details` (question, answer, context, history, model…) and `feedback` are kept; `learning_id`
 * joins a chat record with its `/feedback`.
 */
export class ActivityEvents1764100000000 implements MigrationInterface {
  name = 'ActivityEvents1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE reporting.activity_event_ids`);
    await q.query(`CREATE TABLE reporting.activity_events (
      id bigint NOT NULL DEFAULT nextval('reporting.activity_event_ids'),
      event_id text NOT NULL,
      kbid uuid NOT NULL,
      type text NOT NULL,
      date timestamptz NOT NULL,
      user_id text,
      user_type text,
      client_type text,
      total_duration integer,
      resource_id text,
      audit_metadata jsonb NOT NULL DEFAULT '{}',
      details jsonb NOT NULL DEFAULT '{}',
      learning_id text,
      feedback jsonb,
      UNIQUE (event_id, date)
    ) PARTITION BY RANGE (date)`);
    await q.query(`ALTER SEQUENCE reporting.activity_event_ids OWNED BY reporting.activity_events.id`);
    await q.query(`CREATE INDEX activity_events_kb_type_id_idx ON reporting.activity_events (kbid, type, id)`);
    await q.query(
      `CREATE INDEX activity_events_learning_idx ON reporting.activity_events (kbid, learning_id) WHERE learning_id IS NOT NULL`,
    );
    // Months with activity per KB and type (Get Knowledgebox Activity Downloads List), kept on insert.
    await q.query(
      `CREATE TABLE reporting.activity_months (kbid uuid NOT NULL, type text NOT NULL, month text NOT NULL, PRIMARY KEY (kbid, type, month))`,
    );
    // Feedback on answers, by learning id, whichever arrives first: merged into the chat record when both are there.
    await q.query(
      `CREATE TABLE reporting.chat_feedback (kbid uuid NOT NULL, learning_id text NOT NULL, feedback jsonb NOT NULL, PRIMARY KEY (kbid, learning_id))`,
    );

    const months: { m: string }[] = await q.query(
      `SELECT DISTINCT to_char(date AT TIME ZONE 'UTC', 'YYYY-MM') AS m FROM reporting.audit_events`,
    );
    for (const { m } of months) await ensureMonthPartition(q, m);
    await q.query(`INSERT INTO reporting.activity_events (id, event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata)
      SELECT id, event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata FROM reporting.audit_events`);
    await q.query(`SELECT setval('reporting.activity_event_ids', GREATEST((SELECT max(id) FROM reporting.audit_events), 0) + 1, false)`);
    await q.query(
      `INSERT INTO reporting.activity_months SELECT DISTINCT kbid, type, to_char(date AT TIME ZONE 'UTC', 'YYYY-MM') FROM reporting.audit_events`,
    );
    await q.query(`DROP TABLE reporting.audit_events`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.audit_events (
      id bigserial PRIMARY KEY, event_id text NOT NULL UNIQUE, kbid uuid NOT NULL, type text NOT NULL, date timestamptz NOT NULL, user_id text, user_type text,
      client_type text, total_duration integer, resource_id text, audit_metadata jsonb NOT NULL DEFAULT '{}'
    )`);
    await q.query(`CREATE INDEX audit_events_kb_type_date_idx ON reporting.audit_events (kbid, type, date)`);
    await q.query(`INSERT INTO reporting.audit_events (id, event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata)
      SELECT DISTINCT ON (event_id) id, event_id, kbid, type, date, user_id, user_type, client_type, total_duration, resource_id, audit_metadata FROM reporting.activity_events ORDER BY event_id, id`);
    await q.query(`SELECT setval('reporting.audit_events_id_seq', GREATEST((SELECT max(id) FROM reporting.audit_events), 0) + 1, false)`);
    await q.query(`DROP TABLE reporting.chat_feedback`);
    await q.query(`DROP TABLE reporting.activity_months`);
    await q.query(`DROP TABLE reporting.activity_events`);
  }
}
