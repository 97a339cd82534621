import type { MigrationInterface, QueryRunner } from 'typeorm';

export class LabelSets1763840000000 implements MigrationInterface {
  name = 'LabelSets1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.labelsets (
      kbid uuid NOT NULL,
      id text NOT NULL,
      body jsonb NOT NULL,
      modified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (kbid, id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS content.labelsets`);
  }
}
