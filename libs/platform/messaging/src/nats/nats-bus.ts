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
  type StreamName,
} from '@kb/contracts';
import { deliverLive, liveSubject } from '../shared/live';
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  nanos,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
  type Subscription,
} from 'nats';
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
import { deadLetterSubject, defaultQueueGroup } from '../shared/dead-letter';
import {
  errorEnvelope,
  InvalidPayloadError,
  successEnvelope,
  timeoutError,
  toDomainError,
  toJson,
  unavailableError,
  validateIncoming,
} from '../shared/envelope';
import { StreamInbox } from '../shared/stream-inbox';
import { cancelledError, signalFor } from '../shared/call-signal';
import { JetStreamStreams } from './jetstream-streams';
import { CancelRoutes, isNoResponders, noResponderDelayMs, ReplyRoutes, sendCancel, sendRequest } from './nats-calls';
import { connectionOptions, type NatsAuth, type NatsTls } from './nats-connection';
import { JetStreamWorker } from './jetstream-worker';
import {
  contextFromHeaders,
  contextHeaders,
  decodeText,
  encodeText,
  inboxPrefix,
  natsName,
  STREAM_PART,
  TIMEOUT_MS,
  type StreamPart,
} from './nats-codec';
import { waitAll } from '../shared/wait-all';

export interface NatsBusOptions {
  servers: string | string[];
  /** Connection name shown by the server (the app's name); also names the app's reply inboxes. */
  name: string;
  /** Omitted: an anonymous connection (a server without authorization, e.g. a developer's). */
  auth?: NatsAuth;
  tls?: NatsTls;
  /** Prepended to every subject, stream and consumer name; tests use a unique one per run. */
  prefix?: string;
  requestTimeoutMs?: number;
  logger?: BusLogger;
  /** Event and queue definitions whose streams are created at connect time. */
  streams?: ReadonlyArray<EventDef<unknown> | QueueDef<unknown>>;
  /** Retention of stream messages (default 7 days). */
  maxAgeMs?: number;
  /** Longest close() waits for running handlers (default 10 s). */
  drainTimeoutMs?: number;
  /** How long one pull waits for a message (default 5 s; min 1 s). */
  fetchExpiresMs?: number;
  /** Copies the JetStream cluster keeps of each stream this process creates (default 1; 3 in a 3-server cluster). */
  streamReplicas?: number;
}

/** Tries of a consumer operation that another process's stream update can make fail for a moment. */
const CONSUMER_ATTEMPTS = 8;

/** The distributed transport: core NATS for rpc and streamed replies, JetStream for events and queues. */
export class NatsMessageBus implements MessageBus {
  private readonly js: JetStreamClient;
  private readonly streams: JetStreamStreams;
  private readonly prefix: string;
  private readonly replies: ReplyRoutes;
  private readonly cancels: CancelRoutes;
  private readonly logger: BusLogger;
  private readonly requestTimeoutMs: number;
  private readonly drainTimeoutMs: number;
  private readonly fetchExpiresMs: number;
  private readonly subscriptions: Subscription[] = [];
  private readonly workers: JetStreamWorker<unknown>[] = [];
  private readonly ephemeralConsumers: { stream: string; name: string }[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;
  private closing?: Promise<void>;
  private consumingStopped?: Promise<void>;
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    options: NatsBusOptions,
  ) {
    this.prefix = options.prefix ?? '';
    this.replies = new ReplyRoutes(nc, inboxPrefix(options.name));
    this.cancels = new CancelRoutes(nc);
    this.logger = options.logger ?? jsonConsoleLogger;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
    this.fetchExpiresMs = Math.max(1_000, options.fetchExpiresMs ?? 5_000);
    this.js = nc.jetstream();
    this.streams = new JetStreamStreams(jsm, this.prefix, options.maxAgeMs ?? 7 * 24 * 3_600_000, this.logger, options.streamReplicas ?? 1);
    this.watchConnection().catch(() => undefined);
  }

  static async connect(options: NatsBusOptions): Promise<NatsMessageBus> {
    const nc = await connect(await connectionOptions(options));
    try {
      const bus = new NatsMessageBus(nc, await nc.jetstreamManager(), options);
      // Every subject of a stream in one update: processes that start together then all write the
      // same list, and none can drop a subject another has just added.
      const declared = new Map<StreamName, string[]>();
      for (const def of options.streams ?? [])
        declared.set(def.stream, [...(declared.get(def.stream) ?? []), ...bus.streamSubjects(def.subject)]);
      for (const [stream, subjects] of declared) await bus.streams.ensure(stream, subjects);
      return bus;
    } catch (err) {
      // A stream the server refuses (e.g. more replicas than it has servers): no connection left open.
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  async request<Req, Res>(def: RpcDef<Req, Res>, payload: Req, options: RequestOptions = {}): Promise<Res> {
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    const signal = options.signal;
    this.assertOpen();
    if (signal?.aborted) throw cancelledError(def.subject);
    return sendRequest<Res>(this.nc, this.replies, {
      subject: def.subject,
      wireSubject: this.prefix + def.subject,
      body: toJson(payload),
      timeoutMs,
      signal,
      headers: contextHeaders(options.context, { [TIMEOUT_MS]: String(timeoutMs) }),
    });
  }

  async handle<Req, Res>(def: RpcDef<Req, Res>, handler: RpcHandler<Req, Res>, options: HandleOptions = {}): Promise<void> {
    await this.listen(def.subject, options, async (msg, context) => {
      const call = this.cancels.receive(msg);
      let reply: string;
      try {
        const payload = validateIncoming<Req>(def.request, JSON.parse(decodeText(msg.data)));
        reply = toJson(successEnvelope(await handler(payload, context, signalFor(handler, call))));
      } catch (err) {
        // Nobody reads the reply of an abandoned call: its error (usually the abort itself) is no incident.
        if (call.aborted) return;
        const cause = err instanceof InvalidPayloadError ? err.domainError : err;
        reply = toJson(errorEnvelope(cause, this.logger, { subject: def.subject, request_id: context.requestId }));
      } finally {
        call.dispose();
      }
      if (msg.reply && !call.aborted) this.nc.publish(msg.reply, encodeText(reply));
    });
  }

  requestStream<Req, Item>(def: StreamDef<Req, Item>, payload: Req, options: RequestOptions = {}): AsyncIterable<Item> {
    return this.iterateStream<Item>(
      def.subject,
      toJson(payload),
      options.context,
      options.timeoutMs ?? this.requestTimeoutMs,
      options.signal,
    );
  }

  async handleStream<Req, Item>(def: StreamDef<Req, Item>, handler: StreamHandler<Req, Item>, options: HandleOptions = {}): Promise<void> {
    await this.listen(def.subject, options, async (msg, context) => {
      const reply = msg.reply;
      if (!reply) return;
      const send = (part: StreamPart, body: string) =>
        this.nc.publish(reply, encodeText(body), { headers: contextHeaders(undefined, { [STREAM_PART]: part }) });
      const call = this.cancels.receive(msg);
      try {
        const payload = validateIncoming<Req>(def.request, JSON.parse(decodeText(msg.data)));
        for await (const item of handler(payload, context, signalFor(handler, call))) {
          // Leaving the loop calls return() on the handler's iterator: that is how it notices.
          if (call.aborted) return;
          send('item', toJson(item));
        }
        send('end', 'null');
      } catch (err) {
        if (call.aborted) return;
        const cause = err instanceof InvalidPayloadError ? err.domainError : err;
        send('error', toJson(toDomainError(cause, this.logger, { subject: def.subject, request_id: context.requestId }).toJSON()));
      } finally {
        call.dispose();
      }
    });
  }

  async publish<T>(def: EventDef<T>, payload: T, options: PublishOptions = {}): Promise<void> {
    await this.publishToStream(def.stream, def.subject, toJson(payload), options);
  }

  async subscribe<T>(def: EventDef<T>, handler: DeliveryHandler<T>, options: ConsumeOptions = {}): Promise<void> {
    await this.startWorker(def.stream, def.subject, def.payload, handler, options, 'event');
  }

  async enqueue<T>(def: QueueDef<T>, payload: T, options: PublishOptions = {}): Promise<void> {
    await this.publishToStream(def.stream, def.subject, toJson(payload), options);
  }

  async consume<T>(def: QueueDef<T>, handler: DeliveryHandler<T>, options: ConsumeOptions & { durable: string }): Promise<void> {
    await this.startWorker(def.stream, def.subject, def.payload, handler, options, 'queue');
  }

  /** Core NATS, not JetStream: live messages are for the listeners of the moment only. */
  async publishLive<T>(def: LiveDef<T>, key: string, payload: T): Promise<void> {
    this.assertOpen();
    this.nc.publish(this.prefix + liveSubject(def, key), encodeText(toJson(payload)));
  }

  async subscribeLive<T>(def: LiveDef<T>, key: string, handler: LiveHandler<T>): Promise<LiveSubscription> {
    this.assertOpen();
    const sub = this.nc.subscribe(this.prefix + liveSubject(def, key), {
      callback: (err, msg) => {
        if (!err) deliverLive(def, decodeText(msg.data), handler, this.logger);
      },
    });
    // The server has the interest once the flush returns: a later publish from anywhere reaches it.
    await this.nc.flush();
    return {
      close: async () => {
        if (!sub.isClosed()) sub.unsubscribe();
      },
    };
  }

  async isHealthy(): Promise<boolean> {
    return this.connected && !this.closed && !this.nc.isClosed() && !this.nc.isDraining();
  }

  /**
   * Jobs and events first (their handlers may still call this process's own subjects), then the
   * requests: the subscriptions drain, so the server sends new calls to the other replicas (with
   * none, callers send again until one starts: see sendRequest), and the calls already taken
   * finish. The bus stays open meanwhile, so what those handlers publish (outbox relays,
   * notifications) still goes out before `close`.
   */
  stopConsuming(): Promise<void> {
    this.consumingStopped ??= (async () => {
      await Promise.all(this.workers.map((worker) => worker.close(this.drainTimeoutMs)));
      await Promise.all(this.subscriptions.map((sub) => sub.drain().catch(() => undefined)));
      await waitAll(this.running, this.drainTimeoutMs);
    })();
    return this.consumingStopped;
  }

  async close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      await this.stopConsuming();
      // Closed only now: a handler finishing above could still publish.
      this.closed = true;
      for (const { stream, name } of this.ephemeralConsumers) await this.jsm.consumers.delete(stream, name).catch(() => undefined);
      await this.nc.drain().catch(() => undefined);
    })();
    return this.closing;
  }

  /** Drops the connection without settling anything, like a crashed process (tests). */
  async abort(): Promise<void> {
    this.closed = true;
    for (const worker of this.workers) worker.abort();
    await this.nc.close();
  }

  /** Names of streams with this bus's prefix, e.g. for test cleanup. */
  streamName(stream: StreamName): string {
    return this.streams.streamName(stream);
  }

  /**
   * Tracks reconnects so health checks report a lost server while the client retries, and logs
   * what the server refused: a subject missing from this app's permissions shows up as a request
   * that times out, and this line says why.
   */
  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.connected = false;
      if (status.type === 'reconnect') this.connected = true;
      const refused = (status as { permissionContext?: { operation: string; subject: string } }).permissionContext;
      if (status.type === 'error' && refused)
        this.logger.error('NATS refused an operation this app is not permitted', {
          operation: refused.operation,
          subject: refused.subject,
        });
    }
  }

  /** Resolves once the server has the subscription: a request sent afterwards, from any process, finds it. */
  private async listen(subject: string, options: HandleOptions, serve: (msg: Msg, context: BusContext) => Promise<void>): Promise<void> {
    this.assertOpen();
    const queue = this.prefix + (options.queueGroup ?? defaultQueueGroup(subject));
    const sub = this.nc.subscribe(this.prefix + subject, {
      queue,
      callback: (err, msg) => {
        if (err) return this.logger.warn('Subscription error', { subject, err: describeError(err) });
        const task = serve(msg, contextFromHeaders(msg.headers)).catch((e) =>
          this.logger.error('Replying failed', { subject, err: describeError(e) }),
        );
        this.running.add(task);
        void task.finally(() => this.running.delete(task));
      },
    });
    this.subscriptions.push(sub);
    await this.nc.flush();
  }

  private async *iterateStream<Item>(
    subject: string,
    body: string,
    context: BusContext | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<Item> {
    this.assertOpen();
    if (signal?.aborted) throw cancelledError(subject);
    const inbox = new StreamInbox<unknown>();
    const deadline = Date.now() + timeoutMs;
    let attempts = 0;
    let resend: NodeJS.Timeout | undefined;
    const send = () => {
      if (!this.nc.isClosed())
        this.nc.publish(this.prefix + subject, encodeText(body), { reply: inboxSubject, headers: contextHeaders(context) });
    };
    const inboxSubject = this.replies.open((err, msg) => {
      // Nobody took the call (a restarting service): sent again until the time limit, like a request.
      if (isNoResponders(err, msg)) {
        const wait = noResponderDelayMs(attempts++);
        if (Date.now() + wait >= deadline) return inbox.fail(unavailableError(subject));
        resend = setTimeout(send, wait);
        return;
      }
      if (err || !msg)
        return inbox.fail(
          new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `Bus stream on ${subject} failed`, { subject, reason: String(err) }),
        );
      const part = msg.headers?.get(STREAM_PART) as StreamPart | undefined;
      try {
        const parsed: unknown = JSON.parse(decodeText(msg.data));
        if (part === 'item') inbox.push(parsed);
        else if (part === 'end') inbox.end();
        else inbox.fail(DomainError.fromJSON(parsed as never));
      } catch {
        inbox.fail(new DomainError(ErrorCodes.INTERNAL, 'Malformed stream reply from bus'));
      }
    });
    let completed = false;
    const onAbort = () => inbox.fail(cancelledError(subject));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      send();
      for (;;) {
        const next = await inbox.next(timeoutMs, () => timeoutError(subject, timeoutMs));
        if (next.done) {
          completed = true;
          return;
        }
        yield next.value as Item;
      }
    } catch (err) {
      // A timeout or the caller's cancel leaves the responder working: tell it to stop.
      completed = !(DomainError.isDomainError(err) && err.code === ErrorCodes.BUS_TIMEOUT);
      throw err;
    } finally {
      clearTimeout(resend);
      signal?.removeEventListener('abort', onAbort);
      if (!completed) sendCancel(this.nc, inboxSubject);
      this.replies.close(inboxSubject);
    }
  }

  private async publishToStream(stream: StreamName, subject: string, body: string, options: PublishOptions): Promise<void> {
    this.assertOpen();
    await this.ensureStream(stream, subject);
    const send = () =>
      this.js.publish(this.prefix + subject, encodeText(body), {
        msgID: options.msgId ?? randomUUID(),
        headers: contextHeaders(options.context),
      });
    try {
      await send();
    } catch (err) {
      // 503: no stream takes the subject (any more). The message id makes a retry safe either way.
      if ((err as { code?: string }).code !== '503' || !(await this.streams.repair(stream, this.streamSubjects(subject)))) throw err;
      await send();
    }
  }

  /** The stream subjects one event or queue subject needs: itself and its dead letters. */
  private streamSubjects(subject: string): string[] {
    return [this.prefix + subject, this.prefix + deadLetterSubject(subject)];
  }

  private ensureStream(stream: StreamName, subject: string): Promise<void> {
    return this.streams.ensure(stream, this.streamSubjects(subject));
  }

  private async startWorker<T>(
    stream: StreamName,
    subject: string,
    cls: EventDef<T>['payload'],
    handler: DeliveryHandler<T>,
    options: ConsumeOptions,
    kind: 'event' | 'queue',
  ): Promise<void> {
    this.assertOpen();
    await this.ensureStream(stream, subject);
    const resolved = resolveConsumeOptions(options);
    const streamName = this.streams.streamName(stream);
    const config: Partial<ConsumerConfig> = {
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(resolved.ackWaitMs),
      // One extra delivery lets the worker dead-letter a message whose last attempt hung.
      max_deliver: resolved.maxDeliver + 1,
      filter_subject: this.prefix + subject,
      // Queues keep jobs enqueued before their first consumer; events start from "now", like in-process.
      deliver_policy: kind === 'queue' ? DeliverPolicy.All : DeliverPolicy.New,
    };
    let name: string;
    if (resolved.durable) {
      name = natsName(`${this.prefix}${resolved.durable}__${subject}`);
      await this.addConsumer(stream, subject, { ...config, durable_name: name });
    } else {
      const info = await this.withSubjects(stream, subject, () =>
        this.jsm.consumers.add(streamName, { ...config, inactive_threshold: nanos(Math.max(60_000, resolved.ackWaitMs * 2)) }),
      );
      name = info.name;
      this.ephemeralConsumers.push({ stream: streamName, name });
    }
    const worker = new JetStreamWorker<T>({
      js: this.js,
      consumer: await this.js.consumers.get(streamName, name),
      subject,
      consumerName: resolved.durable,
      deadLetterSubject: this.prefix + deadLetterSubject(subject),
      cls,
      handler,
      options: resolved,
      logger: this.logger,
      fetchExpiresMs: this.fetchExpiresMs,
    });
    this.workers.push(worker as JetStreamWorker<unknown>);
    worker.start();
  }

  /**
   * Runs a consumer operation on `subject`; when it fails because another process dropped the
   * subject from the stream (its filter then matches nothing), puts the subject back and runs it again.
   */
  private async withSubjects<T>(stream: StreamName, subject: string, op: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (attempt >= CONSUMER_ATTEMPTS) throw err;
        // The stream may list the subject again already (another process put it back between the
        // failure and this look): the operation is tried again either way, after a short pause.
        await this.streams.repair(stream, this.streamSubjects(subject));
        await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
      }
    }
  }

  /** Creates the durable, or updates what can change (ack wait, attempts) when it exists. */
  private async addConsumer(
    stream: StreamName,
    subject: string,
    config: Partial<ConsumerConfig> & { durable_name: string },
  ): Promise<void> {
    const streamName = this.streams.streamName(stream);
    try {
      await this.withSubjects(stream, subject, () => this.jsm.consumers.add(streamName, config));
    } catch (err) {
      try {
        await this.jsm.consumers.update(streamName, config.durable_name, { ack_wait: config.ack_wait, max_deliver: config.max_deliver });
      } catch (updateErr) {
        // No durable to use: the creation's own error is the one to report.
        if (/consumer not found/i.test((updateErr as Error).message ?? '')) throw err;
        this.logger.warn('Durable consumer exists with another configuration; using it as is', {
          stream: streamName,
          consumer: config.durable_name,
          err: describeError(err),
        });
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'Message bus is closed');
  }
}
