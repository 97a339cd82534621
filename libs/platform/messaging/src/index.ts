export * from './message-bus';
export * from './create-message-bus';
export * from './messaging.module';
export { type BusLogger, jsonConsoleLogger, silentLogger } from './shared/bus-logger';
export { backoffDelay, resolveConsumeOptions, DEFAULT_ACK_WAIT_MS, DEFAULT_BACKOFF_MS, DEFAULT_MAX_DELIVER } from './shared/backoff';
export { type DeadLetter, deadLetterDef, deadLetterSubject, defaultQueueGroup } from './shared/dead-letter';
export { type ReplyEnvelope } from './shared/envelope';
export { InProcessMessageBus, type InProcessBusOptions } from './inprocess/in-process-bus';
export {
  QUEUE_CONSUMER,
  type QueueStore,
  type NewMessage,
  type ClaimRequest,
  type ClaimedJob,
  type ConsumerKey,
  type DeadJob,
} from './inprocess/queue-store';
export { MemoryQueueStore } from './inprocess/memory-queue-store';
export { SqlQueueStore, pgExecutor, type SqlExecutor, type SqlQueueStoreOptions } from './inprocess/sql-queue-store';
export { busSchemaStatements } from './inprocess/bus-schema';
export { CreateBusSchema1760000000000 } from './inprocess/bus-schema.migration';
export { NatsMessageBus, type NatsBusOptions } from './nats/nats-bus';
export type { NatsAuth, NatsTls } from './nats/nats-connection';
export { Coalescer } from './shared/coalescer';
export { AuditPublisher, AUDIT_FLUSH_MS } from './shared/audit-publisher';
export {
  ALL_STREAMS,
  natsPasswordVariable,
  natsPermissions,
  natsServerConfig,
  type NatsPermissions,
  type NatsServerConfigOptions,
} from './nats/nats-permissions';
