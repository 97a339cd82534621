import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exports, imports and account backups of Knowledge Boxes (docs/export-format.md): one row per job, run in the
 * background by the content service (leased, so a crashed job is taken up again), and the
 * resources each import wrote, so a failed import removes exactly those and nothing else.
 */
export class KbTransfers1765100000000 implements MigrationInterface {
  name = 'KbTransfers1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.kb_transfers (
      id uuid PRIMARY KEY,
      kbid uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('export', 'import', 'backup')),
      account_id uuid,
      status text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'running', 'finished', 'errored')),
      blob_key text NOT NULL,
      params jsonb NOT NULL DEFAULT '{}',
      total integer NOT NULL DEFAULT 0,
      processed integer NOT NULL DEFAULT 0,
      attempts integer NOT NULL DEFAULT 0,
      size_bytes bigint,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz,
      finished_at timestamptz
    )`);
    await q.query(`CREATE INDEX kb_transfers_kb_idx ON content.kb_transfers (kbid, created_at)`);
    await q.query(`CREATE INDEX kb_transfers_account_idx ON content.kb_transfers (account_id, created_at) WHERE kind = 'backup'`);
    await q.query(`CREATE INDEX kb_transfers_due_idx ON content.kb_transfers (created_at) WHERE status IN ('scheduled', 'running')`);
    await q.query(`CREATE TABLE content.kb_import_resources (
      import_id uuid NOT NULL REFERENCES content.kb_transfers(id) ON DELETE CASCADE,
      rid uuid NOT NULL,
      PRIMARY KEY (import_id, rid)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.kb_import_resources`);
    await q.query(`DROP TABLE content.kb_transfers`);
  }
}
