import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Single sign-on signs in identities, not e-mail addresses: which IdP of which account provisioned
 * (or had linked to it) each user, which e-mail domains an account proved it controls, and whether
 * a user proved they read the mailbox of their address.
 */
export class SsoIdentities1763840000000 implements MigrationInterface {
  name = 'SsoIdentities1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts.users ADD COLUMN email_verified_at timestamptz`);
    // The bootstrap administrator's address is the operator's own configuration.
    await q.query(`UPDATE accounts.users SET email_verified_at = created_at WHERE type = 'ROOT'`);

    await q.query(`CREATE TABLE accounts.user_identities (
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      idp_entity_id text NOT NULL,
      subject text NOT NULL,
      user_id uuid NOT NULL REFERENCES accounts.users(id) ON DELETE CASCADE,
      linked boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, idp_entity_id, subject)
    )`);
    await q.query(`CREATE INDEX user_identities_user_idx ON accounts.user_identities (user_id)`);

    await q.query(`CREATE TABLE accounts.saml_domains (
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      domain text NOT NULL,
      token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      checked_at timestamptz,
      verified_at timestamptz,
      PRIMARY KEY (account_id, domain)
    )`);
    // One account at most holds a verified claim on a domain; pending claims may compete.
    await q.query(`CREATE UNIQUE INDEX saml_domains_verified_key ON accounts.saml_domains (domain) WHERE verified_at IS NOT NULL`);

    // A link intent: the AuthnRequest was started by this signed-in user to attach the IdP identity to them.
    await q.query(`ALTER TABLE accounts.saml_requests ADD COLUMN link_user_id uuid REFERENCES accounts.users(id) ON DELETE CASCADE`);
    // An invitation whose link went by mail: holding the link proves the invitee reads that mailbox.
    await q.query(`ALTER TABLE accounts.invites ADD COLUMN mailed_at timestamptz`);

    // Domains configured before this migration become unverified claims: nobody proved them yet.
    await q.query(`INSERT INTO accounts.saml_domains (account_id, domain, token)
      SELECT DISTINCT a.id, lower(d), md5(random()::text || clock_timestamp()::text || a.id::text || d) || md5(random()::text || d)
      FROM accounts.accounts a, jsonb_array_elements_text(a.saml_config -> 'domains') d
      WHERE a.saml_config IS NOT NULL
      ON CONFLICT DO NOTHING`);
    await q.query(`INSERT INTO accounts.saml_domains (account_id, domain, token)
      SELECT a.id, lower(a.domain), md5(random()::text || clock_timestamp()::text || a.id::text) || md5(random()::text || a.domain)
      FROM accounts.accounts a
      WHERE a.saml_config IS NULL AND a.saml_entity_id IS NOT NULL AND a.saml_sso_url IS NOT NULL AND a.saml_x509_cert IS NOT NULL AND a.domain IS NOT NULL
      ON CONFLICT DO NOTHING`);
    // Users single sign-on created before (no password) keep signing in through the IdP of the account
    // they joined with, once that account verifies the domain. Users with a password are never attached.
    await q.query(`INSERT INTO accounts.user_identities (account_id, idp_entity_id, subject, user_id)
      SELECT a.id, a.saml_config ->> 'entity_id', u.email, u.id
      FROM accounts.users u
      JOIN accounts.account_users au ON au.user_id = u.id
      JOIN accounts.accounts a ON a.id = au.account_id
      WHERE u.password_hash IS NULL AND u.type <> 'ROOT' AND a.saml_config IS NOT NULL
        AND a.saml_config -> 'domains' ? split_part(u.email, '@', 2)
      ON CONFLICT DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts.invites DROP COLUMN IF EXISTS mailed_at`);
    await q.query(`ALTER TABLE accounts.saml_requests DROP COLUMN IF EXISTS link_user_id`);
    await q.query(`DROP TABLE IF EXISTS accounts.saml_domains`);
    await q.query(`DROP TABLE IF EXISTS accounts.user_identities`);
    await q.query(`ALTER TABLE accounts.users DROP COLUMN IF EXISTS email_verified_at`);
  }
}
