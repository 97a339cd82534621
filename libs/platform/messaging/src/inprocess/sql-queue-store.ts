import type { BusContext, DomainErrorJson } from '@kb/contracts';
import { assertSchemaName, busSchemaStatements } from './bus-schema';
import { QUEUE_CONSUMER, type ClaimedJob, type ClaimRequest, type DeadJob, type NewMessage, type QueueStore } from './queue-store';

/** The one thing the store needs from a database: a TypeORM DataSource fits as is. */
export interface SqlExecutor {
  /** Resolves to the result rows; `unknown[]` accepts executors typed `any[]` too. */
  query(sql: string, params?: unknown[]): Promise<unknown[]>;
}

/** Adapts a `pg` Pool/Client (whose query() resolves to `{ rows }`) to SqlExecutor. */
export function pgExecutor(client: { query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }> }): SqlExecutor {
  return { query: async (sql, params) => (await client.query(sql, params)).rows };
}

export interface SqlQueueStoreOptions {
  /** Schema holding the tables (default `bus`); tests use a unique one per run. */
  schema?: string;
  /** Run ensureSchema() from init() (default true); turn off when migrations own the schema. */
  createSchema?: boolean;
}

type Row = Record<string, unknown>;

/**
 * QueueStore over PostgreSQL (server or PGlite). Every method is ONE statement so no transaction
 * spans an await; claims use FOR UPDATE SKIP LOCKED plus a lease, so several processes may share
 * the tables. UPDATEs are wrapped in a CTE with a final SELECT because TypeORM's query() returns
 * `[rows, count]` for a bare UPDATE.
 */
export class SqlQueueStore implements QueueStore {
  readonly schema: string;
  private readonly createSchema: boolean;

  constructor(
    private readonly db: SqlExecutor,
    options: SqlQueueStoreOptions = {},
  ) {
    this.schema = assertSchemaName(options.schema ?? 'bus');
    this.createSchema = options.createSchema ?? true;
  }

  async init(): Promise<void> {
    if (this.createSchema) await this.ensureSchema();
  }

  /** Idempotent; two processes starting at once may race on CREATE, so one retry is allowed. */
  async ensureSchema(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        for (const sql of busSchemaStatements(this.schema)) await this.db.query(sql);
        return;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  }

  async dropSchema(): Promise<void> {
    await this.db.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
  }

  async insertJob(message: NewMessage): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO ${this.schema}.jobs (msg_id, subject, consumer, body, context, dedup_key)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (subject, consumer, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [message.msgId, message.subject, QUEUE_CONSUMER, message.body, JSON.stringify(message.context), message.dedupKey ?? null],
    );
    return rows.length > 0;
  }

  async insertFanout(message: NewMessage): Promise<number> {
    // One statement reads the registered consumers and inserts: no consumer can be half-registered.
    const rows = await this.db.query(
      `INSERT INTO ${this.schema}.jobs (msg_id, subject, consumer, body, context, dedup_key)
       SELECT $1, c.subject, c.consumer, $3, $4::jsonb, $5 FROM ${this.schema}.consumers c WHERE c.subject = $2
       ON CONFLICT (subject, consumer, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [message.msgId, message.subject, message.body, JSON.stringify(message.context), message.dedupKey ?? null],
    );
    return rows.length;
  }

  async registerConsumer(subject: string, consumer: string): Promise<void> {
    await this.db.query(`INSERT INTO ${this.schema}.consumers (subject, consumer) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [subject, consumer]);
  }

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    const rows = await this.select(
      `WITH picked AS (
         SELECT id FROM ${this.schema}.jobs
         WHERE subject = $1 AND consumer = $2 AND status = 'pending' AND available_at <= now()
           AND (locked_until IS NULL OR locked_until <= now())
         ORDER BY id LIMIT $3
         FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE ${this.schema}.jobs j
         SET attempts = j.attempts + 1, lease_token = $5,
             locked_until = now() + ($4::double precision * interval '1 millisecond')
         FROM picked WHERE j.id = picked.id
         RETURNING j.id, j.msg_id, j.subject, j.consumer, j.body, j.context, j.attempts
       )
       SELECT * FROM claimed ORDER BY id`,
      [request.subject, request.consumer, request.limit, request.leaseMs, request.token],
    );
    return rows.map((row) => ({
      id: String(row.id),
      msgId: String(row.msg_id),
      subject: String(row.subject),
      consumer: String(row.consumer),
      body: String(row.body),
      context: parseJson<BusContext>(row.context) ?? {},
      deliveryCount: Number(row.attempts),
      token: request.token,
    }));
  }

  async ack(id: string, token: string): Promise<boolean> {
    return this.finish(id, token, `status = 'done', finished_at = now()`, []);
  }

  async release(id: string, token: string, delayMs: number, error: DomainErrorJson | null): Promise<boolean> {
    return this.finish(id, token, `available_at = now() + ($3::double precision * interval '1 millisecond'), last_error = $4::jsonb`, [
      delayMs,
      error ? JSON.stringify(error) : null,
    ]);
  }

  async bury(id: string, token: string, error: DomainErrorJson): Promise<boolean> {
    return this.finish(id, token, `status = 'dead', finished_at = now(), last_error = $3::jsonb`, [JSON.stringify(error)]);
  }

  async deadJobs(subject: string): Promise<DeadJob[]> {
    const rows = await this.select(
      `SELECT id, msg_id, subject, consumer, body, attempts, last_error FROM ${this.schema}.jobs WHERE subject = $1 AND status = 'dead' ORDER BY id`,
      [subject],
    );
    return rows.map((row) => ({
      id: String(row.id),
      msgId: String(row.msg_id),
      subject: String(row.subject),
      consumer: String(row.consumer),
      body: String(row.body),
      deliveryCount: Number(row.attempts),
      error: parseJson<DomainErrorJson>(row.last_error),
    }));
  }

  async purgeDone(olderThanMs: number): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM ${this.schema}.jobs WHERE status = 'done' AND finished_at < now() - ($1::double precision * interval '1 millisecond') RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [olderThanMs],
    );
  }

  private async select(sql: string, params: unknown[]): Promise<Row[]> {
    return (await this.db.query(sql, params)) as Row[];
  }

  private async finish(id: string, token: string, set: string, extra: unknown[]): Promise<boolean> {
    const rows = await this.select(
      `WITH changed AS (
         UPDATE ${this.schema}.jobs SET ${set}, locked_until = NULL, lease_token = NULL
         WHERE id = $1::bigint AND lease_token = $2 AND status = 'pending'
         RETURNING id
       )
       SELECT count(*)::int AS n FROM changed`,
      [id, token, ...extra],
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }
}

/** pg and PGlite parse jsonb already; some drivers hand back text. */
function parseJson<T>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return JSON.parse(value) as T;
  return value as T;
}
