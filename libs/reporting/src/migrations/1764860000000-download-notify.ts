import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Activity downloads whose requester asked to be told by e-mail when the file is ready, and when it was sent. */
export class DownloadNotify1764860000000 implements MigrationInterface {
  name = 'DownloadNotify1764860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE reporting.activity_downloads ADD COLUMN notify boolean NOT NULL DEFAULT false, ADD COLUMN notified_at timestamptz`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting.activity_downloads DROP COLUMN notify, DROP COLUMN notified_at`);
  }
}
