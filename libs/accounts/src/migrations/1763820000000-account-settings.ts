import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountSettings1763820000000 implements MigrationInterface {
  name = 'AccountSettings1763820000000';

  async up(q: QueryRunner): Promise<void> {
    // SAML single sign-on: the current form (saml_config) and the older single-provider fields.
    await q.query(`ALTER TABLE accounts.accounts
      ADD COLUMN saml_config jsonb,
      ADD COLUMN saml_entity_id text,
      ADD COLUMN saml_sso_url text,
      ADD COLUMN saml_x509_cert text`);
    // SSO discovery looks accounts up by e-mail domain.
    await q.query(`CREATE INDEX accounts_saml_domains_idx ON accounts.accounts USING gin ((saml_config -> 'domains'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS accounts.accounts_saml_domains_idx`);
    await q.query(
      `ALTER TABLE accounts.accounts DROP COLUMN saml_config, DROP COLUMN saml_entity_id, DROP COLUMN saml_sso_url, DROP COLUMN saml_x509_cert`,
    );
  }
}
