import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * KBs whose reporting data was deleted with them (accounts' `kbDeleted`): an event of such a KB
 * arriving late (still in the bus when the KB went) is not stored again.
 */
export class DeletedKbs1764850000000 implements MigrationInterface {
  name = 'DeletedKbs1764850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE reporting.deleted_kbs (kbid uuid PRIMARY KEY, account_id uuid, deleted_at timestamptz NOT NULL DEFAULT now())`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.deleted_kbs`);
  }
}
