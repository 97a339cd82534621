import type { DataSource } from 'typeorm';
import { createMessageBus, SqlQueueStore, type BusLogger, type MessageBus } from '@kb/platform/messaging';
import type { RuntimeEnv } from './runtime-env';

/**
 * The bus of one process. In-process: queued work persists through `store` (a DataSource on the
 * process's database). NATS: JetStream keeps it, no store needed.
 */
export async function createRuntimeBus(runtime: RuntimeEnv, name: string, logger: BusLogger, store?: DataSource): Promise<MessageBus> {
  const common = { prefix: runtime.bus.prefix, requestTimeoutMs: runtime.bus.requestTimeoutMs, logger };
  if (runtime.bus.transport === 'nats') return createMessageBus({ transport: 'nats', servers: runtime.bus.natsUrl, name, ...common });
  if (!store) throw new Error('The in-process bus needs a database to persist queued work');
  return createMessageBus({ transport: 'inprocess', store: new SqlQueueStore(store), ...common });
}
