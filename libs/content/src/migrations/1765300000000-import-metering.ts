import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports metered like other writes (docs/usage.md, docs/export-format.md): a resource line is
 * `staged` on its import's row (at its `position` in the archive) until its files are stored (`blobs`: key → bytes as the store
 * reported them), then written with its `new` event and marked `metered`, so undoing the import
 * subtracts exactly what was counted. Rows from before this were written unmetered.
 */
export class ImportMetering1765300000000 implements MigrationInterface {
  name = 'ImportMetering1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.kb_import_resources ADD COLUMN staged text`);
    await q.query(`ALTER TABLE content.kb_import_resources ADD COLUMN position integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE content.kb_import_resources ADD COLUMN blobs jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE content.kb_import_resources ADD COLUMN metered boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.kb_import_resources DROP COLUMN metered`);
    await q.query(`ALTER TABLE content.kb_import_resources DROP COLUMN blobs`);
    await q.query(`ALTER TABLE content.kb_import_resources DROP COLUMN position`);
    await q.query(`ALTER TABLE content.kb_import_resources DROP COLUMN staged`);
  }
}
