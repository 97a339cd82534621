import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The blobs a field holds in the store besides its file, by key, with the bytes each held when it
 * was written (docs/usage.md, "Stored bytes"): `artefacts` what the processing result applied last
 * stored (its extracted JSON, a thumbnail), replaced by the next result; `attachments` the message
 * attachments a push copied under a conversation field. A field's write leaves both as they are
 * (the blobs stay until a result replaces them or the field goes). Empty for fields before this.
 */
export class FieldStoredBytes1765250000000 implements MigrationInterface {
  name = 'FieldStoredBytes1765250000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.fields ADD COLUMN artefacts jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE content.fields ADD COLUMN attachments jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.fields DROP COLUMN attachments`);
    await q.query(`ALTER TABLE content.fields DROP COLUMN artefacts`);
  }
}
