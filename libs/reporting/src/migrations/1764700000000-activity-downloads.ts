import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Activity log downloads (spec 4.4, 2.7): a request records the query and the format; a background
 * job of the reporting service writes the file to the blob store and records where it is.
 */
export class ActivityDownloads1764700000000 implements MigrationInterface {
  name = 'ActivityDownloads1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.activity_downloads (
      request_id uuid PRIMARY KEY,
      kbid uuid NOT NULL,
      event_type text NOT NULL,
      format text NOT NULL CHECK (format IN ('ndjson', 'csv')),
      query jsonb NOT NULL,
      email_address text,
      requested_at timestamptz NOT NULL DEFAULT now(),
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
      lease_until timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      blob_key text,
      records integer,
      size_bytes bigint,
      error text,
      finished_at timestamptz
    )`);
    await q.query(`CREATE INDEX activity_downloads_kb_idx ON reporting.activity_downloads (kbid, requested_at)`);
    await q.query(
      `CREATE INDEX activity_downloads_pending_idx ON reporting.activity_downloads (requested_at) WHERE status IN ('pending', 'running')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.activity_downloads`);
  }
}
