import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A KB's saved configurations (docs/kb-configuration.md): search configurations (`search`, by
 * name), key-value schemas (`kv_schema`, by name), split and extract strategies (`split`,
 * `extract`, by generated id). One row each, its validated body as JSON.
 */
export class KbConfigs1765000000000 implements MigrationInterface {
  name = 'KbConfigs1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.kb_configs (
      kbid uuid NOT NULL,
      kind text NOT NULL,
      id text NOT NULL,
      body jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (kbid, kind, id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.kb_configs`);
  }
}
