import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Custom synonyms of a knowledge box (`/custom-synonyms`), applied to keyword search with `with_synonyms`. */
export class Synonyms1764500000000 implements MigrationInterface {
  name = 'Synonyms1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE content.kb_synonyms (kbid uuid PRIMARY KEY, synonyms jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.kb_synonyms`);
  }
}
