import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { EventDef } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { TransactionalOutbox, type OutboxRow } from '@kb/platform/outbox';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';

/**
 * The accounts outbox (`accounts.outbox`): the events a write decides are stored in its
 * transaction (`events`), then published right after commit (`relay`, awaited: callers rely on
 * gateways having dropped a revoked key before the answer). A crash in between leaves the rows for
 * the sweep, so a deleted KB's content and blobs are still removed.
 */
@Injectable()
export class AccountsOutbox extends TransactionalOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(ACCOUNTS_DATA_SOURCE) ds: DataSource,
    @Inject(ACCOUNTS_OPTIONS) options: AccountsOptions,
    @Inject(MESSAGE_BUS) bus: MessageBus,
    @Inject(LOGGER) logger: Logger,
  ) {
    super({ dataSource: ds, schema: 'accounts', bus, logger, sweepMs: options.outboxSweepMs, firstRetryMs: options.outboxFirstRetryMs });
  }

  /** Stores events in the caller's transaction; relay the returned rows after it commits. */
  events(manager: EntityManager, events: OutboxEvent[]): Promise<OutboxRow[]> {
    return this.add(
      manager,
      events.map(([def, payload]) => ({ kind: 'event', target: def.subject, payload: payload as Record<string, unknown> })),
    );
  }

  /** Runs `write` in a transaction with the events it returns stored alongside, then publishes them. */
  async commit<R>(ds: DataSource, write: (m: EntityManager) => Promise<{ result: R; events: OutboxEvent[] }>): Promise<R> {
    const { result, rows } = await ds.transaction(async (m) => {
      const out = await write(m);
      return { result: out.result, rows: await this.events(m, out.events) };
    });
    // Committed: a failure from here on (the bus, or deleting the relayed rows) is the sweep's to retry.
    await this.relay(rows).catch((err: unknown) =>
      this.config.logger.warn({ err: (err as Error).message }, 'outbox relay failed; the sweep will retry'),
    );
    return result;
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }
}

/** An event and its payload, typed by its definition. */
export type OutboxEvent = [EventDef<unknown>, object];

/** Builds an OutboxEvent with its payload checked against the event's type. */
export function outboxEvent<T extends object>(def: EventDef<T>, payload: T): OutboxEvent {
  return [def as EventDef<unknown>, payload];
}
