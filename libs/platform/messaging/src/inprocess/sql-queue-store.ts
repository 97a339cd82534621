import type { BusContext, DomainErrorJson } from '@kb/contracts';
import { assertSchemaName, busSchemaStatements } from './bus-schema';
import { Coalescer } from '../shared/coalescer';
import {
  QUEUE_CONSUMER,
  type ClaimedJob,
  type ConsumerKey,
  type ClaimRequest,
  type DeadJob,
  type NewMessage,
  type QueueStore,
} from './queue-store';

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

  insertJob(message: NewMessage): Promise<boolean> {
    return this.jobInserts.submit(message);
  }

  insertFanout(message: NewMessage): Promise<number> {
    return this.fanoutInserts.submit(message);
  }

  /**
   * Concurrent publishes become one INSERT each kind (see Coalescer). A dedup key used twice in one
   * batch counts as a duplicate for the second message, exactly as two statements would.
   */
  private readonly jobInserts = new Coalescer<NewMessage, boolean>(async (messages) => {
    const batch = firstByKey(messages, (m) => (m.dedupKey === undefined ? undefined : `${m.subject}\u0000${m.dedupKey}`));
    const rows = await this.select(
      `INSERT INTO ${this.schema}.jobs (msg_id, subject, consumer, body, context, dedup_key)
       SELECT t.msg_id, t.subject, $6, t.body, t.context, t.dedup_key
         FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[]) AS t(msg_id, subject, body, context, dedup_key)
       ON CONFLICT (subject, consumer, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
       RETURNING msg_id, subject`,
      [...columns(batch.unique), QUEUE_CONSUMER],
    );
    const inserted = new Set(rows.map((r) => `${String(r['subject'])}\u0000${String(r['msg_id'])}`));
    return messages.map((m, i) => !batch.duplicate[i] && inserted.has(`${m.subject}\u0000${m.msgId}`));
  });

  // One statement reads the registered consumers and inserts: no consumer can be half-registered.
  private readonly fanoutInserts = new Coalescer<NewMessage, number>(async (messages) => {
    const batch = firstByKey(messages, (m) => (m.dedupKey === undefined ? undefined : `${m.subject}\u0000${m.dedupKey}`));
    const rows = await this.select(
      `INSERT INTO ${this.schema}.jobs (msg_id, subject, consumer, body, context, dedup_key)
       SELECT t.msg_id, c.subject, c.consumer, t.body, t.context, t.dedup_key
         FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[]) AS t(msg_id, subject, body, context, dedup_key)
         JOIN ${this.schema}.consumers c ON c.subject = t.subject
       ON CONFLICT (subject, consumer, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
       RETURNING msg_id, subject`,
      columns(batch.unique),
    );
    const counts = new Map<string, number>();
    for (const r of rows) {
      const key = `${String(r['subject'])}\u0000${String(r['msg_id'])}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return messages.map((m, i) => (batch.duplicate[i] ? 0 : (counts.get(`${m.subject}\u0000${m.msgId}`) ?? 0)));
  });

  async registerConsumer(subject: string, consumer: string): Promise<void> {
    await this.db.query(`INSERT INTO ${this.schema}.consumers (subject, consumer) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      subject,
      consumer,
    ]);
  }

  /**
   * One statement for every worker's poll. It walks the pending index's distinct (subject, consumer)
   * pairs (a skip scan: one index probe per pair, however long a backlog is) and keeps the pairs
   * with a due row.
   */
  async due(): Promise<ConsumerKey[]> {
    const s = this.schema;
    const rows = await this.select(
      `WITH RECURSIVE pairs(subject, consumer) AS (
         (SELECT subject, consumer FROM ${s}.jobs WHERE status = 'pending' ORDER BY subject, consumer LIMIT 1)
         UNION ALL
         SELECT n.subject, n.consumer FROM pairs p, LATERAL (
           SELECT subject, consumer FROM ${s}.jobs
            WHERE status = 'pending' AND (subject, consumer) > (p.subject, p.consumer)
            ORDER BY subject, consumer LIMIT 1
         ) n
       )
       SELECT subject, consumer FROM pairs p
        WHERE EXISTS (
          SELECT 1 FROM ${s}.jobs j
           WHERE j.status = 'pending' AND j.subject = p.subject AND j.consumer = p.consumer
             AND j.available_at <= now() AND (j.locked_until IS NULL OR j.locked_until <= now())
        )`,
      [],
    );
    return rows.map((row) => ({ subject: String(row['subject']), consumer: String(row['consumer']) }));
  }

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    const answer = await this.claims.submit(request);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /**
   * Concurrent claims of every worker (processing jobs, results, event consumers) become one
   * statement: each request takes its rows in a LATERAL subquery. A (subject, consumer) pair named
   * twice waits for a later statement of the batch: inside one statement SKIP LOCKED does not skip
   * rows the same statement locked, so the two would take the same rows. A failed statement is
   * answered item by item here (not by the Coalescer's retry of the whole batch), so the rows an
   * earlier statement of the batch claimed are handed to their workers, not left to their lease.
   */
  private readonly claims = new Coalescer<ClaimRequest, ClaimedJob[] | Error>(async (requests) => {
    const answers = new Map<ClaimRequest, ClaimedJob[] | Error>();
    for (const round of roundsByKey(requests, (r) => `${r.subject}\u0000${r.consumer}`)) {
      try {
        for (const [request, jobs] of await this.claimRound(round)) answers.set(request, jobs);
      } catch (err) {
        if (round.length === 1) answers.set(round[0] as ClaimRequest, asError(err));
        else
          for (const request of round) {
            const alone = await this.claimRound([request]).catch(asError);
            answers.set(request, alone instanceof Error ? alone : (alone.get(request) ?? []));
          }
      }
    }
    return requests.map((r) => answers.get(r) ?? []);
  });

  private async claimRound(requests: ClaimRequest[]): Promise<Map<ClaimRequest, ClaimedJob[]>> {
    const rows = await this.select(
      `WITH req AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::double precision[], $5::text[]) AS r(subject, consumer, lim, lease_ms, token)
       ), picked AS (
         SELECT p.id, req.lease_ms, req.token FROM req CROSS JOIN LATERAL (
           SELECT id FROM ${this.schema}.jobs
            WHERE subject = req.subject AND consumer = req.consumer AND status = 'pending' AND available_at <= now()
              AND (locked_until IS NULL OR locked_until <= now())
            ORDER BY id LIMIT req.lim
            FOR UPDATE SKIP LOCKED
         ) p
       ), claimed AS (
         UPDATE ${this.schema}.jobs j
         SET attempts = j.attempts + 1, lease_token = picked.token,
             locked_until = now() + (picked.lease_ms * interval '1 millisecond')
         FROM picked WHERE j.id = picked.id
         RETURNING j.id, j.msg_id, j.subject, j.consumer, j.body, j.context, j.attempts
       )
       SELECT * FROM claimed ORDER BY id`,
      [
        requests.map((r) => r.subject),
        requests.map((r) => r.consumer),
        requests.map((r) => r.limit),
        requests.map((r) => r.leaseMs),
        requests.map((r) => r.token),
      ],
    );
    // A round names each (subject, consumer) once: that pair says whose row it is.
    const byPair = new Map(requests.map((r) => [`${r.subject}\u0000${r.consumer}`, r]));
    const answers = new Map<ClaimRequest, ClaimedJob[]>(requests.map((r) => [r, []]));
    for (const row of rows) {
      const request = byPair.get(`${String(row.subject)}\u0000${String(row.consumer)}`);
      if (!request) continue;
      answers.get(request)?.push({
        id: String(row.id),
        msgId: String(row.msg_id),
        subject: String(row.subject),
        consumer: String(row.consumer),
        body: String(row.body),
        context: parseJson<BusContext>(row.context) ?? {},
        deliveryCount: Number(row.attempts),
        token: request.token,
      });
    }
    return answers;
  }

  extend(id: string, token: string, leaseMs: number): Promise<boolean> {
    return this.extensions.submit({ id, token, leaseMs });
  }

  /** Lease renewals due at the same moment (jobs claimed together beat together) share one UPDATE. */
  private readonly extensions = new Coalescer<{ id: string; token: string; leaseMs: number }, boolean>(async (items) => {
    const rows = await this.select(
      `WITH changed AS (
         UPDATE ${this.schema}.jobs j SET locked_until = now() + (t.lease_ms * interval '1 millisecond')
           FROM unnest($1::bigint[], $2::text[], $3::double precision[]) AS t(id, token, lease_ms)
          WHERE j.id = t.id AND j.lease_token = t.token AND j.status = 'pending'
         RETURNING j.id, j.lease_token
       )
       SELECT id, lease_token FROM changed`,
      [items.map((i) => i.id), items.map((i) => i.token), items.map((i) => i.leaseMs)],
    );
    const kept = new Set(rows.map((r) => `${String(r['id'])}\u0000${String(r['lease_token'])}`));
    return items.map((i) => kept.has(`${i.id}\u0000${i.token}`));
  });

  ack(id: string, token: string): Promise<boolean> {
    return this.acks.submit({ id, token });
  }

  private readonly acks = new Coalescer<{ id: string; token: string }, boolean>(async (items) => {
    // A row acknowledged twice in one batch is done by the first; the second finds it done.
    const batch = firstByKey(items, (i) => i.id);
    const rows = await this.select(
      `WITH changed AS (
         UPDATE ${this.schema}.jobs j SET status = 'done', finished_at = now(), locked_until = NULL, lease_token = NULL
           FROM unnest($1::bigint[], $2::text[]) AS t(id, token)
          WHERE j.id = t.id AND j.lease_token = t.token AND j.status = 'pending'
         RETURNING j.id
       )
       SELECT id FROM changed`,
      [batch.unique.map((i) => i.id), batch.unique.map((i) => i.token)],
    );
    const done = new Set(rows.map((r) => String(r['id'])));
    return items.map((i, n) => !batch.duplicate[n] && done.has(i.id));
  });

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

/**
 * Messages as one array per column. A body is stored as sent: wrapping each message in a JSON
 * document would make the database parse every body (often kilobytes of JSON text) as JSON again
 * only to take it back out as text.
 */
function columns(messages: NewMessage[]): [string[], string[], string[], string[], (string | null)[]] {
  return [
    messages.map((m) => m.msgId),
    messages.map((m) => m.subject),
    messages.map((m) => m.body),
    messages.map((m) => JSON.stringify(m.context)),
    messages.map((m) => m.dedupKey ?? null),
  ];
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Splits items into rounds in which no key appears twice (first occurrences first, order kept). */
function roundsByKey<T>(items: T[], keyOf: (item: T) => string): T[][] {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const key = keyOf(item);
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    (rounds[n] ??= []).push(item);
  }
  return rounds;
}

/** Marks every item whose key was already seen earlier in the list (items without a key never repeat). */
function firstByKey<T>(items: T[], keyOf: (item: T) => string | undefined): { unique: T[]; duplicate: boolean[] } {
  const seen = new Set<string>();
  const unique: T[] = [];
  const duplicate = items.map((item) => {
    const key = keyOf(item);
    if (key !== undefined && seen.has(key)) return true;
    if (key !== undefined) seen.add(key);
    unique.push(item);
    return false;
  });
  return { unique, duplicate };
}

/** pg and PGlite parse jsonb already; some drivers hand back text. */
function parseJson<T>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return JSON.parse(value) as T;
  return value as T;
}
