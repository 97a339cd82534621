import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The `key_value` field type (docs/key-value-fields.md): its values are a field's stored value, as the other types'. */
export class KeyValueFields1765120000000 implements MigrationInterface {
  name = 'KeyValueFields1765120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.fields DROP CONSTRAINT fields_field_type_check`);
    await q.query(
      `ALTER TABLE content.fields ADD CONSTRAINT fields_field_type_check CHECK (field_type IN ('text', 'file', 'link', 'conversation', 'key_value'))`,
    );
    // The key_value filter's candidates (resources with a key_value field).
    await q.query(`CREATE INDEX fields_key_value_idx ON content.fields (kbid, field_id) WHERE field_type = 'key_value'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX content.fields_key_value_idx`);
    await q.query(`DELETE FROM content.fields WHERE field_type = 'key_value'`);
    await q.query(`ALTER TABLE content.fields DROP CONSTRAINT fields_field_type_check`);
    await q.query(
      `ALTER TABLE content.fields ADD CONSTRAINT fields_field_type_check CHECK (field_type IN ('text', 'file', 'link', 'conversation'))`,
    );
  }
}
