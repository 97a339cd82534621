import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Saml1763830000000 implements MigrationInterface {
  name = 'Saml1763830000000';

  async up(q: QueryRunner): Promise<void> {
    // AuthnRequest ids we issued: a response's InResponseTo must name one that is unexpired and unused.
    await q.query(`CREATE TABLE accounts.saml_requests (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`);
    await q.query(`CREATE INDEX saml_requests_expires_idx ON accounts.saml_requests (expires_at)`);
    // Assertion ids already accepted, kept until the assertion itself expires: a second use is a replay.
    await q.query(`CREATE TABLE accounts.saml_assertions (
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      assertion_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, assertion_id)
    )`);
    await q.query(`CREATE INDEX saml_assertions_expires_idx ON accounts.saml_assertions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.saml_assertions`);
    await q.query(`DROP TABLE IF EXISTS accounts.saml_requests`);
  }
}
