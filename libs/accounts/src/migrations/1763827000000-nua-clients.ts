import type { MigrationInterface, QueryRunner } from 'typeorm';

export class NuaClients1763827000000 implements MigrationInterface {
  name = 'NuaClients1763827000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE accounts.nua_clients (
      internal_id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      client_id text NOT NULL,
      title text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      contact text NOT NULL,
      partitions integer NOT NULL DEFAULT 1,
      processing_webhook jsonb,
      allow_kb_management boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT nua_clients_account_client_key UNIQUE (account_id, client_id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.nua_clients`);
  }
}
