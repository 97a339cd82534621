import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Processing webhooks: the target a job's record keeps (from its push), each delivery scheduled
 * when the job completed, and each attempt to make it (docs/webhooks.md). Deliveries are not
 * tied to the record by a foreign key: a job's webhook is still delivered, and its attempts kept,
 * when its resource was deleted meanwhile.
 */
export class Webhooks1764400000000 implements MigrationInterface {
  name = 'Webhooks1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.processing_requests ADD COLUMN webhook jsonb`);
    await q.query(`CREATE TABLE content.webhook_deliveries (
      id uuid PRIMARY KEY,
      processing_id text NOT NULL,
      kbid uuid NOT NULL,
      event text NOT NULL,
      uri text NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`);
    await q.query(`CREATE INDEX webhook_deliveries_job_idx ON content.webhook_deliveries (processing_id)`);
    await q.query(`CREATE TABLE content.webhook_attempts (
      delivery_id uuid NOT NULL REFERENCES content.webhook_deliveries(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      at timestamptz NOT NULL,
      status_code integer,
      error text,
      duration_ms integer NOT NULL,
      PRIMARY KEY (delivery_id, attempt)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.webhook_attempts`);
    await q.query(`DROP TABLE content.webhook_deliveries`);
    await q.query(`ALTER TABLE content.processing_requests DROP COLUMN webhook`);
  }
}
