import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Processing status records (spec 2.7), one per scheduled field job; see ProcessingRequestEntity. */
export class ProcessingRequests1764100000000 implements MigrationInterface {
  name = 'ProcessingRequests1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.processing_requests (
      processing_id text PRIMARY KEY,
      kbid uuid NOT NULL,
      rid uuid NOT NULL REFERENCES content.resources(id) ON DELETE CASCADE,
      field_type text NOT NULL,
      field_id text NOT NULL,
      seqid bigint NOT NULL,
      title text NOT NULL DEFAULT '',
      labels text[] NOT NULL DEFAULT '{}',
      scheduled_at timestamptz NOT NULL,
      completed_at timestamptz,
      failed boolean NOT NULL DEFAULT false,
      retries integer NOT NULL DEFAULT 0,
      response text
    )`);
    await q.query(`CREATE INDEX processing_requests_kb_idx ON content.processing_requests (kbid, scheduled_at, processing_id)`);
    await q.query(`CREATE INDEX processing_requests_rid_idx ON content.processing_requests (rid)`);
    await q.query(
      `CREATE INDEX processing_requests_pending_idx ON content.processing_requests (scheduled_at, processing_id) WHERE completed_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.processing_requests`);
  }
}
