import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The understanding API's Pull: completed processing records get a monotonic sequence number
 * (assigned after their completion committed, see ProcessingPullService), and each pulling client
 * (v2) keeps how far it acknowledged and what is leased to it.
 */
export class ProcessingPull1764300000000 implements MigrationInterface {
  name = 'ProcessingPull1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE content.processing_completion_seq`);
    await q.query(`ALTER TABLE content.processing_requests ADD COLUMN completion_seq bigint`);
    await q.query(
      `CREATE UNIQUE INDEX processing_requests_completion_seq_idx ON content.processing_requests (kbid, completion_seq) WHERE completion_seq IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX processing_requests_unsequenced_idx ON content.processing_requests (completed_at) WHERE completion_seq IS NULL AND completed_at IS NOT NULL`,
    );
    // Also serves the completion rate behind schedule_eta (completions of the last minutes).
    await q.query(
      `CREATE INDEX processing_requests_completed_idx ON content.processing_requests (completed_at) WHERE completed_at IS NOT NULL`,
    );
    await q.query(`CREATE TABLE content.processing_pull_consumers (
      consumer text PRIMARY KEY,
      acked_seq bigint NOT NULL DEFAULT 0,
      delivered_seq bigint NOT NULL DEFAULT 0,
      lease_until timestamptz
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.processing_pull_consumers`);
    await q.query(`DROP INDEX content.processing_requests_completed_idx`);
    await q.query(`DROP INDEX content.processing_requests_unsequenced_idx`);
    await q.query(`DROP INDEX content.processing_requests_completion_seq_idx`);
    await q.query(`ALTER TABLE content.processing_requests DROP COLUMN completion_seq`);
    await q.query(`DROP SEQUENCE content.processing_completion_seq`);
  }
}
