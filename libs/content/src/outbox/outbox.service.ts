import { asRow } from '@kb/platform/database';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ALL_SUBJECTS, type AnyDef, type EventDef, type QueueDef } from '@kb/contracts';
import { Coalescer, MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, type ContentOptions } from '../content.tokens';
import { OutboxEntity, type OutboxKind } from '../entities/outbox.entity';
import { ProcessingRequestEntity } from '../entities/processing-request.entity';
import { processingRequestsOf } from '../processing/processing-requests';

export interface OutboxEntry {
  kind: OutboxKind;
  target: string;
  payload?: Record<string, unknown>;
}

const DEFS = new Map<string, AnyDef>(ALL_SUBJECTS.map((d) => [d.subject, d]));
const RETRY_MS = [1000, 5000, 30000, 120000];

@Injectable()
export class OutboxService implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(CONTENT_OPTIONS) private readonly options: ContentOptions,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Records entries inside the caller's transaction; returns their rows for `relay`. */
  async add(manager: EntityManager, entries: OutboxEntry[]): Promise<OutboxEntity[]> {
    const rows = this.rowsFor(entries);
    await this.insertRows(manager, rows);
    return rows;
  }

  /** The rows for entries, for a caller that writes them itself (in the same statement as its change). */
  rowsFor(entries: OutboxEntry[]): OutboxEntity[] {
    const now = new Date();
    const firstAttempt = new Date(now.getTime() + (this.options.outboxFirstRetryMs ?? 10_000));
    return entries.map((e) => ({ id: randomUUID(), kind: e.kind, target: e.target, payload: e.payload ?? {}, attempts: 0, createdAt: now, nextAttemptAt: firstAttempt }));
  }

  /** Inserts the rows, and a processing status record for each field job among them. */
  async insertRows(manager: EntityManager, rows: OutboxEntity[]): Promise<void> {
    if (rows.length === 0) return;
    await manager.insert(OutboxEntity, rows.map(asRow));
    const requests = processingRequestsOf(rows);
    if (requests.length > 0) await manager.insert(ProcessingRequestEntity, requests.map(asRow));
  }

  /**
   * Carries out rows right after their transaction committed; failures stay for the sweep. The
   * rows carried out are deleted in one statement (the embedded database runs one at a time).
   */
  async relay(rows: OutboxEntity[]): Promise<void> {
    const done: string[] = [];
    for (const row of rows) {
      try {
        await this.execute(row);
        done.push(row.id);
      } catch (err) {
        this.logger.warn({ outbox_id: row.id, kind: row.kind, target: row.target, err: (err as Error).message }, 'outbox relay failed; will retry');
      }
    }
    if (done.length > 0) await this.relayed.submit(done);
  }

  /** Relayed rows go in one DELETE, shared by the relays that finish while one runs (see Coalescer). */
  private readonly relayed = new Coalescer<string[], void>(async (lists) => {
    await this.ds.query(`DELETE FROM content.outbox WHERE id = ANY($1::uuid[])`, [lists.flat()]);
    return lists.map(() => undefined);
  });

  /**
   * Relays without making the caller wait: the write is committed and its side effects are in the
   * outbox, so a crash before they are carried out only delays them until the next sweep.
   */
  relayInBackground(rows: OutboxEntity[]): void {
    if (rows.length === 0) return;
    const pending = this.relay(rows).catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'outbox relay failed; the sweep will retry'));
    this.inFlight.add(pending);
    void pending.finally(() => this.inFlight.delete(pending));
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.options.outboxSweepMs);
    this.timer.unref();
    void this.sweep();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
    await this.sweeping;
  }

  /** Relays due rows; claiming pushes their next attempt out so two replicas do not both take them. */
  sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return this.sweeping ?? Promise.resolve();
    this.sweeping = (async () => {
      try {
        // A bare UPDATE ... RETURNING comes back from TypeORM as [rows, count]; a CTE returns plain rows.
        const claimed: Record<string, unknown>[] = await this.ds.query(
          `WITH due AS (
             UPDATE content.outbox SET attempts = attempts + 1, next_attempt_at = now() + (interval '1 millisecond' * $1)
             WHERE id IN (SELECT id FROM content.outbox WHERE next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 100 FOR UPDATE SKIP LOCKED)
             RETURNING id, kind, target, payload, attempts)
           SELECT * FROM due`,
          [RETRY_MS[0]],
        );
        for (const raw of claimed) {
          const row = { id: raw['id'], kind: raw['kind'], target: raw['target'], payload: raw['payload'], attempts: Number(raw['attempts']) } as OutboxEntity;
          try {
            await this.execute(row);
            await this.ds.getRepository(OutboxEntity).delete({ id: row.id });
          } catch (err) {
            const delay = RETRY_MS[Math.min(row.attempts, RETRY_MS.length - 1)] as number;
            await this.ds.query(`UPDATE content.outbox SET next_attempt_at = now() + (interval '1 millisecond' * $2) WHERE id = $1`, [row.id, delay]);
            this.logger.warn({ outbox_id: row.id, attempts: row.attempts, err: (err as Error).message }, 'outbox retry failed');
          }
        }
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'outbox sweep failed');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  private async execute(row: OutboxEntity): Promise<void> {
    if (row.kind === 'blob_cleanup') {
      await this.blobs.deletePrefix(row.target);
      return;
    }
    const def = DEFS.get(row.target);
    if (!def) throw new Error(`Unknown subject ${row.target}`);
    if (row.kind === 'queue' && def.kind === 'queue') await this.bus.enqueue(def as QueueDef<unknown>, row.payload, { msgId: row.id });
    else if (row.kind === 'event' && def.kind === 'event') await this.bus.publish(def as EventDef<unknown>, row.payload, { msgId: row.id });
    else throw new Error(`Subject ${row.target} is not a ${row.kind}`);
  }
}
