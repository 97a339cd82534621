import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ALL_SUBJECTS, type AnyDef, type EventDef, type QueueDef } from '@kb/contracts';
import { Coalescer, type MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import { outboxTable } from './outbox-table';

/** `queue` and `event` go to the bus; a service may carry out kinds of its own (see `executeOther`). */
export type OutboxKind = 'queue' | 'event' | (string & {});

export interface OutboxEntry {
  kind: OutboxKind;
  /** Bus subject, or what a service's own kind acts on. */
  target: string;
  payload?: Record<string, unknown>;
}

/** One row of `<schema>.outbox` (the columns `outboxTableSql` creates). */
export interface OutboxRow {
  id: string;
  kind: OutboxKind;
  target: string;
  payload: Record<string, unknown>;
  attempts: number;
  createdAt: Date;
  nextAttemptAt: Date;
}

export interface OutboxConfig {
  dataSource: DataSource;
  /** The service's schema: rows live in `<schema>.outbox`, written in the service's own transactions. */
  schema: string;
  bus: MessageBus;
  logger: Logger;
  /** How often due rows are swept (default 5 s). */
  sweepMs?: number;
  /**
   * When the sweep first takes a new row (default 10 s): the writer relays it itself right after
   * commit, so the sweep only picks up rows whose writer crashed or whose relay failed.
   */
  firstRetryMs?: number;
}

const DEFS = new Map<string, AnyDef>(ALL_SUBJECTS.map((d) => [d.subject, d]));
const RETRY_MS = [1000, 5000, 30000, 120000];
const SWEEP_BATCH = 100;

/**
 * The transactional outbox of one service. A write records what it must tell others (bus events and
 * queue jobs) as rows in its own transaction (`add`); after commit the writer relays them (`relay`)
 * and the rows are deleted; a row whose relay failed, or whose writer died between commit and relay,
 * is relayed by the sweep. Delivery is at least once: every message carries the row id as its
 * message id (the bus drops duplicates it still remembers) and consumers must be idempotent.
 */
export class TransactionalOutbox {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly table: string;

  constructor(protected readonly config: OutboxConfig) {
    this.table = outboxTable(config.schema);
  }

  /** Records entries inside the caller's transaction; returns their rows for `relay`. */
  async add(manager: EntityManager, entries: OutboxEntry[]): Promise<OutboxRow[]> {
    const rows = this.rowsFor(entries);
    await this.insertRows(manager, rows);
    return rows;
  }

  /** The rows for entries, for a caller that writes them itself (in the same statement as its change). */
  rowsFor(entries: OutboxEntry[]): OutboxRow[] {
    const now = new Date();
    const firstAttempt = new Date(now.getTime() + (this.config.firstRetryMs ?? 10_000));
    return entries.map((e) => ({
      id: randomUUID(),
      kind: e.kind,
      target: e.target,
      payload: e.payload ?? {},
      attempts: 0,
      createdAt: now,
      nextAttemptAt: firstAttempt,
    }));
  }

  /** Inserts the rows with the caller's transaction (one statement, whatever their number). */
  async insertRows(manager: EntityManager, rows: OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    const records = rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      target: r.target,
      payload: r.payload,
      attempts: r.attempts,
      created_at: r.createdAt.toISOString(),
      next_attempt_at: r.nextAttemptAt.toISOString(),
    }));
    await manager.query(
      `INSERT INTO ${this.table} (id, kind, target, payload, attempts, created_at, next_attempt_at)
       SELECT id, kind, target, payload, attempts, created_at, next_attempt_at
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, kind text, target text, payload jsonb, attempts integer, created_at timestamptz, next_attempt_at timestamptz)`,
      [JSON.stringify(records)],
    );
  }

  /**
   * Carries out rows right after their transaction committed, in order; failures stay for the sweep.
   * The rows carried out are deleted in one statement (the embedded database runs one at a time).
   */
  async relay(rows: OutboxRow[]): Promise<void> {
    const done: string[] = [];
    for (const row of rows) {
      try {
        await this.execute(row);
        done.push(row.id);
      } catch (err) {
        this.config.logger.warn(
          { outbox_id: row.id, kind: row.kind, target: row.target, err: (err as Error).message },
          'outbox relay failed; will retry',
        );
      }
    }
    if (done.length > 0) await this.relayed.submit(done);
  }

  /** Relayed rows go in one DELETE, shared by the relays that finish while one runs (see Coalescer). */
  private readonly relayed = new Coalescer<string[], void>(async (lists) => {
    await this.config.dataSource.query(`DELETE FROM ${this.table} WHERE id = ANY($1::uuid[])`, [lists.flat()]);
    return lists.map(() => undefined);
  });

  /**
   * Relays without making the caller wait: the write is committed and its side effects are in the
   * outbox, so a crash before they are carried out only delays them until the next sweep.
   */
  relayInBackground(rows: OutboxRow[]): void {
    if (rows.length === 0) return;
    const pending = this.relay(rows).catch((err: unknown) =>
      this.config.logger.warn({ err: (err as Error).message }, 'outbox relay failed; the sweep will retry'),
    );
    this.inFlight.add(pending);
    void pending.finally(() => this.inFlight.delete(pending));
  }

  /** Starts the periodic sweep (and sweeps once now: rows a crashed process left behind). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.sweep(), this.config.sweepMs ?? 5000);
    this.timer.unref();
    void this.sweep();
  }

  /** Stops sweeping and waits for the relays and the sweep under way (shutdown flushes them). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.inFlight]);
    await this.sweeping;
  }

  /** Relays due rows; claiming pushes their next attempt out so two replicas do not both take them. */
  sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return this.sweeping ?? Promise.resolve();
    this.sweeping = this.sweepOnce().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const ds = this.config.dataSource;
    try {
      // A bare UPDATE ... RETURNING comes back from TypeORM as [rows, count]; a CTE returns plain rows.
      const claimed: Record<string, unknown>[] = await ds.query(
        `WITH due AS (
           UPDATE ${this.table} SET attempts = attempts + 1, next_attempt_at = now() + (interval '1 millisecond' * $1)
           WHERE id IN (SELECT id FROM ${this.table} WHERE next_attempt_at <= now() ORDER BY next_attempt_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)
           RETURNING id, kind, target, payload, attempts, created_at, next_attempt_at)
         SELECT * FROM due ORDER BY created_at`,
        [RETRY_MS[0]],
      );
      for (const raw of claimed) {
        const row: OutboxRow = {
          id: raw['id'] as string,
          kind: raw['kind'] as string,
          target: raw['target'] as string,
          payload: raw['payload'] as Record<string, unknown>,
          attempts: Number(raw['attempts']),
          createdAt: new Date(raw['created_at'] as string),
          nextAttemptAt: new Date(raw['next_attempt_at'] as string),
        };
        try {
          await this.execute(row);
          await ds.query(`DELETE FROM ${this.table} WHERE id = $1`, [row.id]);
        } catch (err) {
          const delay = RETRY_MS[Math.min(row.attempts, RETRY_MS.length - 1)] as number;
          await ds.query(`UPDATE ${this.table} SET next_attempt_at = now() + (interval '1 millisecond' * $2) WHERE id = $1`, [
            row.id,
            delay,
          ]);
          this.config.logger.warn({ outbox_id: row.id, attempts: row.attempts, err: (err as Error).message }, 'outbox retry failed');
        }
      }
    } catch (err) {
      this.config.logger.error({ err: (err as Error).message }, 'outbox sweep failed');
    }
  }

  private async execute(row: OutboxRow): Promise<void> {
    if (row.kind !== 'queue' && row.kind !== 'event') return this.executeOther(row);
    const def = DEFS.get(row.target);
    if (!def) throw new Error(`Unknown subject ${row.target}`);
    if (row.kind === 'queue' && def.kind === 'queue')
      await this.config.bus.enqueue(def as QueueDef<unknown>, row.payload, { msgId: row.id });
    else if (row.kind === 'event' && def.kind === 'event')
      await this.config.bus.publish(def as EventDef<unknown>, row.payload, { msgId: row.id });
    else throw new Error(`Subject ${row.target} is not a ${row.kind}`);
  }

  /** Carries out a row of a service's own kind; throwing leaves it for a later attempt. */
  protected async executeOther(row: OutboxRow): Promise<void> {
    throw new Error(`Unknown outbox kind ${row.kind}`);
  }
}
