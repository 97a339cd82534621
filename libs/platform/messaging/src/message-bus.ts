import type { BusContext, EventDef, LiveDef, QueueDef, RpcDef, StreamDef } from '@kb/contracts';

export interface RequestOptions {
  /** Milliseconds before the call fails with BUS_TIMEOUT (default from BusOptions.requestTimeoutMs). */
  timeoutMs?: number;
  context?: BusContext;
  /**
   * Aborting it cancels the call: the caller's promise (or stream) fails at once and the handler's
   * signal aborts, on whichever process it runs. The handler's signal also aborts at the deadline
   * (`timeoutMs` for requests; for streams, when the caller stops reading or a gap times out).
   */
  signal?: AbortSignal;
}

export interface HandleOptions {
  /** Replicas sharing a queue group share the load; defaults to the subject's service name. */
  queueGroup?: string;
}

export interface DeliveryMeta {
  /** Stable id of the message across redeliveries (use it for idempotency). */
  id: string;
  subject: string;
  /** 1 on the first delivery. */
  deliveryCount: number;
  context: BusContext;
}

/**
 * `signal` aborts when nobody waits for the answer any more (the caller cancelled, went away or
 * its deadline passed): long work should stop and pass it to whatever it calls.
 */
export type RpcHandler<Req, Res> = (payload: Req, context: BusContext, signal: AbortSignal) => Promise<Res>;
export type StreamHandler<Req, Item> = (payload: Req, context: BusContext, signal: AbortSignal) => AsyncIterable<Item>;
export type DeliveryHandler<T> = (payload: T, meta: DeliveryMeta) => Promise<void>;
/** Called synchronously for each live message: hand it on, never wait in it. */
export type LiveHandler<T> = (payload: T) => void;

/** One live subscription; `close` stops it (idempotent). */
export interface LiveSubscription {
  close(): Promise<void>;
}

export interface ConsumeOptions {
  /**
   * Durable consumer name. Consumers sharing it share the work (each message to one of them);
   * for `subscribe`, each distinct durable name receives every event. Omitted on `subscribe`:
   * an ephemeral fan-out subscription (every live instance gets every new event, nothing is kept).
   */
  durable?: string;
  /** Deliveries before the message goes to the dead-letter subject (default 5). */
  maxDeliver?: number;
  /** Delay before redelivery n (1-based index into the list; the last value repeats). */
  backoffMs?: number[];
  /** A delivery not acknowledged within this time is redelivered (default 30 000). */
  ackWaitMs?: number;
  /**
   * A live worker keeps renewing its delivery's ack wait while the handler runs, up to this long
   * in all (default: `ackWaitMs`, no renewal). Long jobs can then use a short ack wait: the job of
   * a dead worker comes back within `ackWaitMs`, while a slow one is not handed to a second worker.
   */
  maxWorkingMs?: number;
  /** Messages handled at once by this consumer (default 1). */
  concurrency?: number;
}

export interface PublishOptions {
  context?: BusContext;
  /** Deduplication id: a second enqueue with the same id within the window is dropped. */
  msgId?: string;
}

/**
 * One API over two transports (NATS + JetStream, or in-process with a database-backed queue).
 * Every payload is JSON round-tripped. Handler errors reach callers as DomainError with the same
 * code; unexpected errors become INTERNAL with an error id that is logged where it happened.
 */
export interface MessageBus {
  request<Req, Res>(def: RpcDef<Req, Res>, payload: Req, options?: RequestOptions): Promise<Res>;
  handle<Req, Res>(def: RpcDef<Req, Res>, handler: RpcHandler<Req, Res>, options?: HandleOptions): Promise<void>;

  requestStream<Req, Item>(def: StreamDef<Req, Item>, payload: Req, options?: RequestOptions): AsyncIterable<Item>;
  handleStream<Req, Item>(def: StreamDef<Req, Item>, handler: StreamHandler<Req, Item>, options?: HandleOptions): Promise<void>;

  publish<T>(def: EventDef<T>, payload: T, options?: PublishOptions): Promise<void>;
  subscribe<T>(def: EventDef<T>, handler: DeliveryHandler<T>, options?: ConsumeOptions): Promise<void>;

  enqueue<T>(def: QueueDef<T>, payload: T, options?: PublishOptions): Promise<void>;
  consume<T>(def: QueueDef<T>, handler: DeliveryHandler<T>, options: ConsumeOptions & { durable: string }): Promise<void>;

  /** Live messages: to whoever listens to `key` now; nothing is stored or retried (a lost one is lost). */
  publishLive<T>(def: LiveDef<T>, key: string, payload: T): Promise<void>;
  /** Resolves once the subscription is in place: a message published afterwards, anywhere, reaches it. */
  subscribeLive<T>(def: LiveDef<T>, key: string, handler: LiveHandler<T>): Promise<LiveSubscription>;

  /** True when the transport can carry messages now. */
  isHealthy(): Promise<boolean>;
  /**
   * Graceful shutdown, step one: stops pulling queued jobs and events and waits for the handlers
   * running (a job still running when the drain time runs out is handed back, never acknowledged).
   * Then, over NATS, it stops taking requests (other replicas, or the next process, get them) and
   * waits for the ones taken; the in-process bus keeps answering (its callers are in the same
   * process). Requests can still be sent and messages published, so finishing work and an outbox
   * flush can use the bus; `close` follows.
   */
  stopConsuming(): Promise<void>;
  /** Stops consuming, waits for in-flight handlers, closes connections. */
  close(): Promise<void>;
}

export const MESSAGE_BUS = Symbol('MESSAGE_BUS');
