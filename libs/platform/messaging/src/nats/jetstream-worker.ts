import type { ClassConstructor } from 'class-transformer';
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from 'nats';
import type { DeliveryHandler } from '../message-bus';
import type { ResolvedConsumeOptions } from '../shared/backoff';
import { describeError, type BusLogger } from '../shared/bus-logger';
import { processRenewing } from '../shared/delivery';
import { waitAll } from '../shared/wait-all';
import { toJson } from '../shared/envelope';
import { contextFromHeaders, contextHeaders, decodeText, encodeText } from './nats-codec';

export interface JetStreamWorkerConfig<T> {
  js: JetStreamClient;
  consumer: Consumer;
  /** Subject as the application knows it. */
  subject: string;
  consumerName?: string;
  /** Already prefixed `dlq.<subject>`, covered by the same stream. */
  deadLetterSubject: string;
  cls?: ClassConstructor<object>;
  handler: DeliveryHandler<T>;
  options: ResolvedConsumeOptions;
  logger: BusLogger;
  /** Longest a pull waits for a message before asking again. */
  fetchExpiresMs: number;
}

/**
 * Pulls from one durable (or ephemeral) pull consumer. Each of `concurrency` slots fetches one
 * message at a time, so nothing waits in a client buffer while its ack wait runs out.
 */
export class JetStreamWorker<T> {
  private closed = false;
  private closing?: Promise<void>;
  private aborted = false;
  private readonly batches = new Set<ConsumerMessages>();
  private readonly slots: Promise<void>[] = [];
  /** "Still working" timers of running handlers; an aborted worker stops them, so the server redelivers. */
  private readonly heartbeats = new Set<NodeJS.Timeout>();
  /** Messages being handled: nak'ed if a shutdown's drain runs out. */
  private readonly handling = new Set<JsMsg>();

  constructor(private readonly config: JetStreamWorkerConfig<T>) {}

  start(): void {
    for (let i = 0; i < this.config.options.concurrency; i++) this.slots.push(this.slot());
  }

  /**
   * Stops fetching and waits for the running handlers (at most `drainMs`); messages still being
   * handled then are nak'ed (their outcome is dropped), so another consumer takes them at once.
   */
  close(drainMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.closing ??= this.drainAndClose(drainMs);
    return this.closing;
  }

  private async drainAndClose(drainMs: number): Promise<void> {
    this.closed = true;
    for (const batch of this.batches) batch.stop();
    const drained = Number.isFinite(drainMs) ? await waitAll(this.slots, drainMs) : (await Promise.all(this.slots), true);
    if (drained || this.handling.size === 0) return;
    this.aborted = true;
    for (const heartbeat of this.heartbeats) clearInterval(heartbeat);
    this.heartbeats.clear();
    for (const msg of this.handling) msg.nak();
    this.config.logger.warn('Shutdown: messages still being handled were handed back', {
      subject: this.config.subject,
      messages: this.handling.size,
    });
    this.handling.clear();
  }

  /** Stops without settling anything: the server redelivers after the ack wait. */
  abort(): void {
    this.aborted = true;
    this.closed = true;
    for (const batch of this.batches) batch.stop();
    for (const heartbeat of this.heartbeats) clearInterval(heartbeat);
    this.heartbeats.clear();
  }

  private async slot(): Promise<void> {
    while (!this.closed) {
      let batch: ConsumerMessages | undefined;
      try {
        batch = await this.config.consumer.fetch({ max_messages: 1, expires: this.config.fetchExpiresMs });
        this.batches.add(batch);
        if (this.closed) batch.stop();
        for await (const msg of batch) {
          if (this.aborted) break;
          await this.handle(msg);
        }
      } catch (err) {
        if (this.closed) return;
        this.config.logger.warn('Fetching from JetStream failed; retrying', { subject: this.config.subject, err: describeError(err) });
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        if (batch) this.batches.delete(batch);
      }
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    const { subject, consumerName, cls, handler, options, logger } = this.config;
    const delivery = {
      id: msg.headers?.get('Nats-Msg-Id') || `${msg.info.stream}:${msg.seq}`,
      subject,
      consumer: consumerName,
      deliveryCount: msg.info.deliveryCount,
      body: decodeText(msg.data),
      context: contextFromHeaders(msg.headers),
    };
    // "Still working" resets the ack timer while the handler runs (up to maxWorkingMs): a long job
    // is not redelivered while its worker lives, and a dead worker's job comes back within ack_wait.
    this.handling.add(msg);
    const outcome = await processRenewing(delivery, cls, handler, options, logger, () => msg.working(), this.heartbeats).finally(() =>
      this.handling.delete(msg),
    );
    if (this.aborted) return;
    try {
      if (outcome.action === 'ack') {
        // Wait for the server to confirm, so "handled" really means "will not come back".
        await msg.ackAck();
      } else if (outcome.action === 'retry') {
        msg.nak(outcome.delayMs);
      } else {
        const headers = contextHeaders(outcome.letter.context);
        await this.config.js.publish(this.config.deadLetterSubject, encodeText(toJson(outcome.letter)), {
          headers,
          // A retry after a failed term() must not publish the dead letter twice.
          msgID: `dlq:${consumerName ?? ''}:${outcome.letter.id}`,
        });
        msg.term();
      }
    } catch (err) {
      logger.warn('Settling a JetStream message failed; it will be redelivered', { subject, err: describeError(err) });
    }
  }
}
