import type { DataSource } from 'typeorm';
import { ALL_SUBJECTS, type EventDef, type QueueDef } from '@kb/contracts';
import { createMessageBus, SqlQueueStore, type BusLogger, type MessageBus } from '@kb/platform/messaging';
import type { RuntimeEnv } from './runtime-env';

/**
 * The bus of one process. In-process: queued work persists through `store` (a DataSource on the
 * process's database). NATS: JetStream keeps it, no store needed.
 */
export async function createRuntimeBus(runtime: RuntimeEnv, name: string, logger: BusLogger, store?: DataSource): Promise<MessageBus> {
  // Running jobs get half of the shutdown grace to finish; the rest is for HTTP, the outbox and the databases.
  const drainTimeoutMs = Math.floor(runtime.shutdownGraceMs / 2);
  const common = { prefix: runtime.bus.prefix, requestTimeoutMs: runtime.bus.requestTimeoutMs, logger, drainTimeoutMs };
  if (runtime.bus.transport === 'nats') {
    // Every app declares every stream subject of the system at connect, so apps started together
    // write identical subject lists and none drops another's subject.
    const streams = ALL_SUBJECTS.filter((d): d is EventDef<unknown> | QueueDef<unknown> => d.kind === 'event' || d.kind === 'queue');
    return createMessageBus({
      transport: 'nats',
      servers: runtime.bus.natsUrl,
      name,
      streams,
      streamReplicas: runtime.bus.streamReplicas,
      ...runtime.bus.nats,
      ...common,
    });
  }
  if (!store) throw new Error('The in-process bus needs a database to persist queued work');
  return createMessageBus({ transport: 'inprocess', store: new SqlQueueStore(store), ...common });
}
