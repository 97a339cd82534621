import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ReportingInitial1763800000000 implements MigrationInterface {
  name = 'ReportingInitial1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.audit_events (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      kbid uuid NOT NULL,
      type text NOT NULL,
      date timestamptz NOT NULL,
      user_id text,
      user_type text,
      client_type text,
      total_duration integer,
      resource_id text,
      audit_metadata jsonb NOT NULL DEFAULT '{}'
    )`);
    await q.query(`CREATE INDEX audit_events_kb_type_date_idx ON reporting.audit_events (kbid, type, date)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting.audit_events`);
  }
}
