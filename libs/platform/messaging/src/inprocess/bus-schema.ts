/** Schema names are interpolated into SQL, so only plain identifiers are accepted. */
export function assertSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`Invalid bus schema name: ${schema}`);
  return schema;
}

/**
 * Tables of the in-process bus. `jobs` holds queue jobs (consumer '') and one row per durable
 * consumer for events; `consumers` remembers durable names so events published while a consumer's
 * process is down still reach it. Plain PostgreSQL: runs on the server and on PGlite.
 */
export function busSchemaStatements(schemaName = 'bus'): string[] {
  const s = assertSchemaName(schemaName);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}.jobs (
      id bigserial PRIMARY KEY,
      msg_id text NOT NULL,
      subject text NOT NULL,
      consumer text NOT NULL DEFAULT '',
      body text NOT NULL,
      context jsonb NOT NULL DEFAULT '{}'::jsonb,
      dedup_key text,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      available_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,
      lease_token text,
      last_error jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      CONSTRAINT jobs_status_check CHECK (status IN ('pending', 'done', 'dead'))
    )`,
    `CREATE INDEX IF NOT EXISTS jobs_due_idx ON ${s}.jobs (subject, consumer, id) WHERE status = 'pending'`,
    `CREATE UNIQUE INDEX IF NOT EXISTS jobs_dedup_idx ON ${s}.jobs (subject, consumer, dedup_key) WHERE dedup_key IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS jobs_finished_idx ON ${s}.jobs (finished_at) WHERE status = 'done'`,
    `CREATE TABLE IF NOT EXISTS ${s}.consumers (
      subject text NOT NULL,
      consumer text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (subject, consumer)
    )`,
  ];
}

export function busSchemaDropStatements(schemaName = 'bus'): string[] {
  const s = assertSchemaName(schemaName);
  return [`DROP TABLE IF EXISTS ${s}.jobs`, `DROP TABLE IF EXISTS ${s}.consumers`];
}
