import { randomUUID } from 'node:crypto';
import {
  DomainError,
  ErrorCodes,
  type BusContext,
  type EventDef,
  type LiveDef,
  type QueueDef,
  type RpcDef,
  type StreamDef,
} from '@kb/contracts';
import { deliverLive, liveSubject } from '../shared/live';
import type { ClassConstructor } from 'class-transformer';
import type {
  ConsumeOptions,
  DeliveryHandler,
  HandleOptions,
  LiveHandler,
  LiveSubscription,
  MessageBus,
  PublishOptions,
  RequestOptions,
  RpcHandler,
  StreamHandler,
} from '../message-bus';
import { resolveConsumeOptions } from '../shared/backoff';
import { describeError, jsonConsoleLogger, type BusLogger } from '../shared/bus-logger';
import { deadLetterSubject, defaultQueueGroup, type DeadLetter } from '../shared/dead-letter';
import {
  decodeEnvelope,
  errorEnvelope,
  InvalidPayloadError,
  jsonRoundTrip,
  successEnvelope,
  timeoutError,
  toDomainError,
  toJson,
  unavailableError,
  validateIncoming,
} from '../shared/envelope';
import { HandlerGroups } from '../shared/handler-groups';
import { StreamInbox } from '../shared/stream-inbox';
import { callSignal, cancelledError, signalFor, type CallSignal } from '../shared/call-signal';
import { MemoryQueueStore } from './memory-queue-store';
import { QUEUE_CONSUMER, type NewMessage, type QueueStore } from './queue-store';
import { QueueWorker } from './queue-worker';
import { waitAll } from '../shared/wait-all';

export interface InProcessBusOptions {
  /** Where queue jobs and durable event deliveries live (SqlQueueStore in standalone). */
  store: QueueStore;
  /** Prepended to every stored subject, so tests can share one store. */
  prefix?: string;
  requestTimeoutMs?: number;
  logger?: BusLogger;
  /** How often the store is polled for due retries and expired leases (default 500 ms). */
  pollIntervalMs?: number;
  /** Longest close() waits for running handlers (default 10 s). */
  drainTimeoutMs?: number;
  /** Done rows are kept this long for msgId deduplication (default 2 min, like JetStream). */
  dedupWindowMs?: number;
}

/** What travels with a call besides body and context: its deadline and cancel, from which the handler's signal comes. */
interface CallTerms {
  call: CallSignal;
}
type RpcResponder = (body: string, context: BusContext, terms: CallTerms) => Promise<string>;
type StreamResponder = (body: string, context: BusContext, inbox: StreamInbox<unknown>, terms: CallTerms) => Promise<void>;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The bus inside one process, behaving like the NATS transport: JSON round-trips, dispatch on a
 * later turn, the same timeouts and errors, and queued work persisted in a QueueStore.
 */
export class InProcessMessageBus implements MessageBus {
  private readonly store: QueueStore;
  /** Ephemeral subscriptions keep nothing across restarts, like NATS ephemeral consumers. */
  private readonly ephemeralStore = new MemoryQueueStore();
  private readonly prefix: string;
  private readonly requestTimeoutMs: number;
  private readonly logger: BusLogger;
  private readonly pollIntervalMs: number;
  private readonly drainTimeoutMs: number;
  private readonly dedupWindowMs: number;
  private readonly rpc = new HandlerGroups<RpcResponder>();
  private readonly streams = new HandlerGroups<StreamResponder>();
  private readonly workers: QueueWorker<unknown>[] = [];
  /** Live listeners by subject (with prefix and key). */
  private readonly live = new Map<string, Set<(text: string) => void>>();
  private readonly running = new Set<Promise<unknown>>();
  private ready?: Promise<void>;
  private pollTimer?: NodeJS.Timeout;
  private lastPurge = Date.now();
  private closed = false;
  private consumingStopped = false;

  constructor(options: InProcessBusOptions) {
    this.store = options.store;
    this.prefix = options.prefix ?? '';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.logger = options.logger ?? jsonConsoleLogger;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    this.dedupWindowMs = options.dedupWindowMs ?? 120_000;
  }

  async request<Req, Res>(def: RpcDef<Req, Res>, payload: Req, options: RequestOptions = {}): Promise<Res> {
    const body = toJson(payload);
    const context = jsonRoundTrip(options.context ?? {});
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    await nextTurn();
    const responders = this.closed ? [] : this.rpc.pick(def.subject);
    if (responders.length === 0) throw unavailableError(def.subject);
    const signal = options.signal;
    if (signal?.aborted) throw cancelledError(def.subject);
    const call = callSignal(undefined);
    return new Promise<Res>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      // The handler runs in this process: its signal is this call's own, aborted at the deadline or
      // when the caller cancels (no second timer on the handler's side).
      const timer = setTimeout(
        () =>
          settle(() => {
            call.expire();
            reject(timeoutError(def.subject, timeoutMs));
          }),
        timeoutMs,
      );
      const onAbort = () =>
        settle(() => {
          call.cancel();
          reject(cancelledError(def.subject));
        });
      signal?.addEventListener('abort', onAbort, { once: true });
      for (const responder of responders) {
        // Like NATS, with several queue groups the first reply wins.
        void this.track(responder(body, context, { call })).then((reply) =>
          settle(() => {
            try {
              resolve(decodeEnvelope<Res>(reply));
            } catch (err) {
              reject(err);
            }
          }),
        );
      }
    });
  }

  async handle<Req, Res>(def: RpcDef<Req, Res>, handler: RpcHandler<Req, Res>, options: HandleOptions = {}): Promise<void> {
    this.assertOpen();
    const responder: RpcResponder = async (body, context, terms) => {
      await nextTurn();
      const call = terms.call;
      try {
        const payload = validateIncoming<Req>(def.request, JSON.parse(body));
        return toJson(successEnvelope(await handler(payload, jsonRoundTrip(context), signalFor(handler, call))));
      } catch (err) {
        // Nobody reads the reply of an abandoned call: its error (usually the abort itself) is no incident.
        if (call.aborted) return toJson(errorEnvelope(cancelledError(def.subject), this.logger, {}));
        const cause = err instanceof InvalidPayloadError ? err.domainError : err;
        return toJson(errorEnvelope(cause, this.logger, { subject: def.subject, request_id: context.requestId }));
      }
    };
    this.rpc.add(def.subject, options.queueGroup ?? defaultQueueGroup(def.subject), responder);
  }

  requestStream<Req, Item>(def: StreamDef<Req, Item>, payload: Req, options: RequestOptions = {}): AsyncIterable<Item> {
    const body = toJson(payload);
    const context = jsonRoundTrip(options.context ?? {});
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    return this.iterateStream<Item>(def.subject, body, context, timeoutMs, options.signal);
  }

  async handleStream<Req, Item>(def: StreamDef<Req, Item>, handler: StreamHandler<Req, Item>, options: HandleOptions = {}): Promise<void> {
    this.assertOpen();
    const responder: StreamResponder = async (body, context, inbox, terms) => {
      await nextTurn();
      const call = terms.call;
      try {
        const payload = validateIncoming<Req>(def.request, JSON.parse(body));
        for await (const item of handler(payload, jsonRoundTrip(context), signalFor(handler, call))) {
          // Leaving the loop calls return() on the handler's iterator: that is how it notices.
          if (call.aborted) return;
          inbox.push(jsonRoundTrip(item));
        }
        inbox.end();
      } catch (err) {
        if (call.aborted) return;
        const cause = err instanceof InvalidPayloadError ? err.domainError : err;
        const domain = toDomainError(cause, this.logger, { subject: def.subject, request_id: context.requestId });
        inbox.fail(DomainError.fromJSON(jsonRoundTrip(domain.toJSON())));
      }
    };
    this.streams.add(def.subject, options.queueGroup ?? defaultQueueGroup(def.subject), responder);
  }

  async publish<T>(def: EventDef<T>, payload: T, options: PublishOptions = {}): Promise<void> {
    await this.publishRaw(def.subject, toJson(payload), options);
  }

  async subscribe<T>(def: EventDef<T>, handler: DeliveryHandler<T>, options: ConsumeOptions = {}): Promise<void> {
    this.assertOpen();
    await this.init();
    const stored = this.prefix + def.subject;
    if (options.durable) {
      await this.store.registerConsumer(stored, options.durable);
      this.addWorker(this.store, stored, options.durable, options.durable, def.subject, def.payload, handler, options);
    } else {
      const id = `~ephemeral-${randomUUID()}`;
      await this.ephemeralStore.registerConsumer(stored, id);
      this.addWorker(this.ephemeralStore, stored, id, undefined, def.subject, def.payload, handler, options);
    }
  }

  async enqueue<T>(def: QueueDef<T>, payload: T, options: PublishOptions = {}): Promise<void> {
    this.assertOpen();
    await this.init();
    const stored = this.prefix + def.subject;
    if (await this.store.insertJob(this.newMessage(stored, toJson(payload), options))) this.wakeWorkers(stored);
  }

  async consume<T>(def: QueueDef<T>, handler: DeliveryHandler<T>, options: ConsumeOptions & { durable: string }): Promise<void> {
    this.assertOpen();
    await this.init();
    this.addWorker(this.store, this.prefix + def.subject, QUEUE_CONSUMER, options.durable, def.subject, def.payload, handler, options);
  }

  async publishLive<T>(def: LiveDef<T>, key: string, payload: T): Promise<void> {
    this.assertOpen();
    const listeners = this.live.get(this.prefix + liveSubject(def, key));
    if (!listeners || listeners.size === 0) return;
    const text = toJson(payload);
    // Delivered on a later turn, like a message from another process.
    for (const listener of [...listeners]) queueMicrotask(() => listener(text));
  }

  async subscribeLive<T>(def: LiveDef<T>, key: string, handler: LiveHandler<T>): Promise<LiveSubscription> {
    this.assertOpen();
    const subject = this.prefix + liveSubject(def, key);
    const listener = (text: string) => deliverLive(def, text, handler, this.logger);
    const listeners = this.live.get(subject) ?? new Set();
    listeners.add(listener);
    this.live.set(subject, listeners);
    return {
      close: async () => {
        listeners.delete(listener);
        if (listeners.size === 0 && this.live.get(subject) === listeners) this.live.delete(subject);
      },
    };
  }

  async isHealthy(): Promise<boolean> {
    return !this.closed;
  }

  async stopConsuming(): Promise<void> {
    this.consumingStopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await Promise.all(this.workers.map((worker) => worker.close(this.drainTimeoutMs)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.consumingStopped = true;
    this.rpc.clear();
    this.streams.clear();
    this.live.clear();
    if (this.pollTimer) clearInterval(this.pollTimer);
    await Promise.all(this.workers.map((worker) => worker.close(this.drainTimeoutMs)));
    await waitAll(this.running, this.drainTimeoutMs);
  }

  /** Stops at once without acknowledging running jobs, like a crashed process (tests, shutdown on fatal errors). */
  abort(): void {
    this.closed = true;
    this.rpc.clear();
    this.streams.clear();
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const worker of this.workers) worker.abort();
  }

  private async *iterateStream<Item>(
    subject: string,
    body: string,
    context: BusContext,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<Item> {
    await nextTurn();
    const responder = this.closed ? undefined : this.streams.pick(subject)[0];
    if (!responder) throw unavailableError(subject);
    if (signal?.aborted) throw cancelledError(subject);
    const inbox = new StreamInbox<unknown>();
    // Streams have no overall deadline: the handler stops when the caller stops reading, times out or cancels.
    const call = callSignal(undefined);
    const onAbort = () => {
      inbox.fail(cancelledError(subject));
      call.cancel();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.track(responder(body, context, inbox, { call }));
    try {
      for (;;) {
        const next = await inbox.next(timeoutMs, () => timeoutError(subject, timeoutMs));
        if (next.done) return;
        yield next.value as Item;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      call.cancel();
    }
  }

  private async publishRaw(subject: string, body: string, options: PublishOptions): Promise<void> {
    this.assertOpen();
    await this.init();
    const stored = this.prefix + subject;
    const message = this.newMessage(stored, body, options);
    const durable = await this.store.insertFanout(message);
    const ephemeral = await this.ephemeralStore.insertFanout(message);
    if (durable + ephemeral > 0) this.wakeWorkers(stored);
  }

  private newMessage(storedSubject: string, body: string, options: PublishOptions): NewMessage {
    return {
      msgId: options.msgId ?? randomUUID(),
      subject: storedSubject,
      body,
      context: jsonRoundTrip(options.context ?? {}),
      dedupKey: options.msgId,
    };
  }

  private addWorker<T>(
    store: QueueStore,
    storedSubject: string,
    consumer: string,
    consumerName: string | undefined,
    subject: string,
    cls: ClassConstructor<object> | undefined,
    handler: DeliveryHandler<T>,
    options: ConsumeOptions,
  ): void {
    const worker = new QueueWorker<T>({
      store,
      storedSubject,
      subject,
      consumer,
      consumerName,
      cls,
      handler,
      options: resolveConsumeOptions(options),
      logger: this.logger,
      onDeadLetter: (letter) => this.emitDeadLetter(letter),
    });
    this.workers.push(worker as QueueWorker<unknown>);
    this.startPolling();
    worker.wake();
  }

  private async emitDeadLetter(letter: DeadLetter): Promise<void> {
    if (this.closed) return;
    try {
      await this.publishRaw(deadLetterSubject(letter.subject), toJson(letter), { context: letter.context });
    } catch (err) {
      this.logger.error('Publishing a dead letter failed; it stays in the store as dead', {
        subject: letter.subject,
        err: describeError(err),
      });
    }
  }

  /** Rotates the wake order so workers sharing a durable name take turns. */
  private wakeWorkers(storedSubject: string): void {
    const matching = this.workers.filter((worker) => worker.storedSubject === storedSubject);
    if (matching.length === 0) return;
    const first = this.workers.indexOf(matching[0] as QueueWorker<unknown>);
    this.workers.push(...this.workers.splice(first, 1));
    for (const worker of matching) worker.wake();
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed || this.consumingStopped) return;
    this.pollTimer = setInterval(() => this.poll(), this.pollIntervalMs);
    this.pollTimer.unref();
  }

  /**
   * Each store is asked once which of its consumers have due rows (retries come due, leases of a
   * dead process run out, another process sharing the tables inserted), and only those workers wake.
   * If the store cannot answer, every worker of it wakes, as a claim would have told each the same.
   */
  private poll(): void {
    for (const store of new Set(this.workers.map((worker) => worker.store))) {
      const workers = this.workers.filter((worker) => worker.store === store);
      store.due().then(
        (keys) => {
          const due = new Set(keys.map((k) => `${k.subject}\u0000${k.consumer}`));
          for (const worker of workers) if (due.has(`${worker.storedSubject}\u0000${worker.consumer}`)) worker.wake();
        },
        (err: unknown) => {
          this.logger.warn('Polling for due jobs failed; waking every worker', { err: describeError(err) });
          for (const worker of workers) worker.wake();
        },
      );
    }
    if (Date.now() - this.lastPurge < 30_000) return;
    this.lastPurge = Date.now();
    for (const store of [this.store, this.ephemeralStore]) {
      store.purgeDone(this.dedupWindowMs).catch((err) => this.logger.warn('Purging done jobs failed', { err: describeError(err) }));
    }
  }

  private init(): Promise<void> {
    this.ready ??= this.store.init().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    void promise.finally(() => this.running.delete(promise)).catch(() => undefined);
    return promise;
  }

  private assertOpen(): void {
    if (this.closed) throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'Message bus is closed');
  }
}
