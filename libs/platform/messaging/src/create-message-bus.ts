import type { EventDef, QueueDef } from '@kb/contracts';
import type { MessageBus } from './message-bus';
import { InProcessMessageBus } from './inprocess/in-process-bus';
import type { QueueStore } from './inprocess/queue-store';
import { NatsMessageBus } from './nats/nats-bus';
import type { NatsAuth, NatsTls } from './nats/nats-connection';
import type { BusLogger } from './shared/bus-logger';

interface CommonBusConfig {
  /** Prepended to subjects, streams and consumer names; empty in production. */
  prefix?: string;
  requestTimeoutMs?: number;
  logger?: BusLogger;
  drainTimeoutMs?: number;
}

export interface NatsBusConfig extends CommonBusConfig {
  transport: 'nats';
  servers: string | string[];
  name: string;
  auth?: NatsAuth;
  tls?: NatsTls;
  streams?: ReadonlyArray<EventDef<unknown> | QueueDef<unknown>>;
  maxAgeMs?: number;
  /** Copies the JetStream cluster keeps of each stream it creates (default 1). */
  streamReplicas?: number;
}

export interface InProcessBusConfig extends CommonBusConfig {
  transport: 'inprocess';
  store: QueueStore;
  pollIntervalMs?: number;
}

export type MessageBusConfig = NatsBusConfig | InProcessBusConfig;

/**
 * Builds the configured transport. Create ONE in-process bus per process and share it (the Nest
 * module does): handlers registered on one instance are invisible to another.
 */
export async function createMessageBus(config: MessageBusConfig): Promise<MessageBus> {
  if (config.transport === 'nats') {
    const { transport: _transport, ...options } = config;
    return NatsMessageBus.connect(options);
  }
  const { transport: _transport, ...options } = config;
  const bus = new InProcessMessageBus(options);
  // Fail at startup, not at the first enqueue, when the database is unreachable.
  await options.store.init();
  return bus;
}
