import type { MigrationInterface, QueryRunner } from 'typeorm';

const TYPES = (types: string[]): string => types.map((t) => `'${t}'`).join(', ');
const BEFORE = ['text', 'file', 'link', 'conversation', 'key_value'];

/** The `keywordset` and `datetime` field types (docs/keyword-datetime-fields.md): stored as the other types'. */
export class KeywordDatetimeFields1765200000000 implements MigrationInterface {
  name = 'KeywordDatetimeFields1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.fields DROP CONSTRAINT fields_field_type_check`);
    await q.query(
      `ALTER TABLE content.fields ADD CONSTRAINT fields_field_type_check CHECK (field_type IN (${TYPES([...BEFORE, 'keywordset', 'datetime'])}))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM content.fields WHERE field_type IN ('keywordset', 'datetime')`);
    await q.query(`ALTER TABLE content.fields DROP CONSTRAINT fields_field_type_check`);
    await q.query(`ALTER TABLE content.fields ADD CONSTRAINT fields_field_type_check CHECK (field_type IN (${TYPES(BEFORE)}))`);
  }
}
