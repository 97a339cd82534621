import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Invites1763825000000 implements MigrationInterface {
  name = 'Invites1763825000000';

  async up(q: QueryRunner): Promise<void> {
    // One pending invitation per address and target; accepting it grants `role` and stamps accepted_at.
    await q.query(`CREATE TABLE accounts.invites (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      kb_id uuid REFERENCES accounts.knowledge_boxes(id) ON DELETE CASCADE,
      role text NOT NULL,
      invited_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz
    )`);
    await q.query(
      `CREATE UNIQUE INDEX invites_pending_key ON accounts.invites (account_id, coalesce(kb_id, '00000000-0000-0000-0000-000000000000'::uuid), email) WHERE accepted_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.invites`);
  }
}
