import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** The SQLSTATEs a named statement's cache entry can be wrong by (see `preparedQuery`). */
const DUPLICATE_PREPARED_STATEMENT = '42P05';
const UNDEFINED_PREPARED_STATEMENT = '26000';

/** A read run as a named prepared statement: parsed, analysed and planned once per session. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** The statement of `text`, named by a hash of it (the same text is the same statement everywhere). */
export function prepared(text: string): PreparedStatement {
  return { name: `kb_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
}

interface PgConnection {
  parsedStatements: Record<string, string>;
}
interface PgClient {
  connection: PgConnection;
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  release(err?: Error | boolean): void;
}

/**
 * Runs a hot read (one of a request's few statements) as a named prepared statement on a
 * connection of the data source's pool, outside any transaction.
 *
 * Why: for a short statement PostgreSQL spends most of its time in parsing and planning; prepared,
 * it only binds and executes. Measured on the embedded database (PGlite, a statement's round trip
 * from this process): the index generation read 0.46 → 0.24 ms, 20 paragraph rows 0.73 → 0.52 ms,
 * 18 resources 0.84 → 0.58 ms (docs/benchmarks.md).
 *
 * The embedded database serves every connection from ONE session, so a statement another
 * connection prepared already exists there while this connection's driver does not know it
 * (42P05 on Parse): then it is marked as parsed and run again. A session that lost it (26000,
 * e.g. after `DEALLOCATE ALL`) has it parsed again. On a real server each connection is its own
 * session and prepares once. Statement texts must not use `*` (a changed table would change the
 * prepared result type).
 */
export async function preparedQuery<T>(ds: DataSource, statement: PreparedStatement, values: unknown[]): Promise<T[]> {
  const pool = (ds.driver as unknown as { master?: { connect(): Promise<PgClient> } }).master;
  if (!pool) return (await ds.query(statement.text, values)) as T[];
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const config = { name: statement.name, text: statement.text, values };
    // (three tries: on the shared session, connections that all found it missing race to parse it again)
    for (let attempt = 1; ; attempt++) {
      try {
        return (await client.query(config)).rows as T[];
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (attempt >= 3) throw err;
        if (code === DUPLICATE_PREPARED_STATEMENT) client.connection.parsedStatements[statement.name] = statement.text;
        else if (code === UNDEFINED_PREPARED_STATEMENT) delete client.connection.parsedStatements[statement.name];
        else throw err;
      }
    }
  } catch (err) {
    // A connection that failed at the protocol level is not handed out again.
    if (!(err as { code?: unknown }).code) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}
