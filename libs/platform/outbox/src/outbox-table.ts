const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** `<schema>.outbox`, for a schema name that is a plain identifier (it is written into SQL). */
export function outboxTable(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`Invalid outbox schema name "${schema}"`);
  return `${schema}.outbox`;
}

/**
 * The statements a service's migration runs to create its outbox table; `kinds` are the row kinds
 * it writes (bus `queue` and `event` rows, and any of its own).
 */
export function outboxTableSql(schema: string, kinds: readonly string[] = ['queue', 'event']): string[] {
  const table = outboxTable(schema);
  for (const kind of kinds) if (!/^[a-z_]{1,40}$/.test(kind)) throw new Error(`Invalid outbox kind "${kind}"`);
  return [
    `CREATE TABLE ${table} (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN (${kinds.map((k) => `'${k}'`).join(', ')})),
      target text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}',
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      next_attempt_at timestamptz NOT NULL
    )`,
    `CREATE INDEX outbox_due_idx ON ${table} (next_attempt_at)`,
  ];
}
