import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountsInitial1763800000000 implements MigrationInterface {
  name = 'AccountsInitial1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE accounts.users (
      id uuid PRIMARY KEY,
      email text NOT NULL UNIQUE,
      name text NOT NULL DEFAULT '',
      password_hash text,
      type text NOT NULL DEFAULT 'USER',
      language text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_login timestamptz
    )`);
    await q.query(`CREATE TABLE accounts.accounts (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      title text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      type text NOT NULL DEFAULT 'stash-trial',
      domain text,
      blocking_state text NOT NULL DEFAULT 'unblocked',
      blocked_features jsonb NOT NULL DEFAULT '[]',
      max_kbs integer NOT NULL DEFAULT 10,
      max_users integer NOT NULL DEFAULT 25,
      limits jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      trial_expiration_date timestamptz
    )`);
    await q.query(`CREATE TABLE accounts.account_users (
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES accounts.users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('AOWNER', 'AMEMBER')),
      PRIMARY KEY (account_id, user_id)
    )`);
    await q.query(`CREATE INDEX account_users_user_idx ON accounts.account_users (user_id)`);
    await q.query(`CREATE TABLE accounts.knowledge_boxes (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      slug text NOT NULL,
      title text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      state text NOT NULL DEFAULT 'PUBLISHED' CHECK (state IN ('PUBLISHED', 'PRIVATE')),
      zone text NOT NULL,
      allowed_origins jsonb NOT NULL DEFAULT '[]',
      search_configs jsonb NOT NULL DEFAULT '{}',
      external_index_provider text,
      learning_configuration jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT knowledge_boxes_account_slug_key UNIQUE (account_id, slug)
    )`);
    await q.query(`CREATE TABLE accounts.kb_users (
      kb_id uuid NOT NULL REFERENCES accounts.knowledge_boxes(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES accounts.users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('SOWNER', 'SCONTRIBUTOR', 'SMEMBER')),
      PRIMARY KEY (kb_id, user_id)
    )`);
    await q.query(`CREATE TABLE accounts.service_accounts (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts.accounts(id) ON DELETE CASCADE,
      kb_id uuid NOT NULL REFERENCES accounts.knowledge_boxes(id) ON DELETE CASCADE,
      title text NOT NULL DEFAULT '',
      role text NOT NULL CHECK (role IN ('SOWNER', 'SCONTRIBUTOR', 'SMEMBER')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX service_accounts_kb_idx ON accounts.service_accounts (kb_id)`);
    await q.query(`CREATE TABLE accounts.secret_credentials (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('api_key', 'pat', 'ua_key')),
      owner_id uuid NOT NULL,
      description text NOT NULL DEFAULT '',
      salt text NOT NULL,
      secret_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX secret_credentials_owner_idx ON accounts.secret_credentials (owner_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['secret_credentials', 'service_accounts', 'kb_users', 'knowledge_boxes', 'account_users', 'accounts', 'users']) {
      await q.query(`DROP TABLE IF EXISTS accounts.${t}`);
    }
  }
}
