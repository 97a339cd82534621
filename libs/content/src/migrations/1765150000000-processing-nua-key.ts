import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The understanding-API client whose key scheduled a processing job (a push), so that the job's
 * `processed` and `indexed` events are metered under that key (Get Usage `nua_key_id`, docs/usage.md).
 * Null for jobs of other writes, and for jobs scheduled before this column.
 */
export class ProcessingNuaKey1765150000000 implements MigrationInterface {
  name = 'ProcessingNuaKey1765150000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.processing_requests ADD COLUMN nua_key_id uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.processing_requests DROP COLUMN nua_key_id`);
  }
}
