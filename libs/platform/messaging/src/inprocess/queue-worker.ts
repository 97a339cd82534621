import { randomUUID } from 'node:crypto';
import type { ClassConstructor } from 'class-transformer';
import type { DeliveryHandler } from '../message-bus';
import type { ResolvedConsumeOptions } from '../shared/backoff';
import { describeError, type BusLogger } from '../shared/bus-logger';
import type { DeadLetter } from '../shared/dead-letter';
import { processRenewing } from '../shared/delivery';
import { waitAll } from '../shared/wait-all';
import type { ClaimedJob, QueueStore } from './queue-store';

export interface QueueWorkerConfig<T> {
  store: QueueStore;
  /** Subject as stored (with the bus prefix). */
  storedSubject: string;
  /** Subject as the application knows it. */
  subject: string;
  /** Row owner: a durable name, or QUEUE_CONSUMER for queue jobs. */
  consumer: string;
  /** Name reported in logs and dead letters. */
  consumerName?: string;
  cls?: ClassConstructor<object>;
  handler: DeliveryHandler<T>;
  options: ResolvedConsumeOptions;
  logger: BusLogger;
  onDeadLetter: (letter: DeadLetter) => Promise<void>;
}

/**
 * Pulls due rows of one (subject, consumer) from the store and runs them with at most
 * `concurrency` in flight. Woken after inserts, by retry timers and by the bus's poll timer.
 */
export class QueueWorker<T> {
  private inFlight = 0;
  private pumping?: Promise<void>;
  private again = false;
  private closed = false;
  private closing?: Promise<void>;
  private aborted = false;
  /**
   * The last claim may have left due rows behind: it was cut short by the concurrency limit, or a
   * wake came while every slot was busy. Then a finishing job claims again; otherwise the queue was
   * drained and only a wake (an insert here, or the bus's poll) makes the worker claim.
   */
  private backlog = false;
  private readonly running = new Set<Promise<void>>();
  /** Jobs claimed and not yet settled: handed back if a shutdown's drain runs out. */
  private readonly claimed = new Map<string, ClaimedJob>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Lease renewals of running handlers; an aborted worker stops renewing, so its leases run out. */
  private readonly heartbeats = new Set<NodeJS.Timeout>();

  constructor(private readonly config: QueueWorkerConfig<T>) {}

  get store(): QueueStore {
    return this.config.store;
  }

  get storedSubject(): string {
    return this.config.storedSubject;
  }

  get consumer(): string {
    return this.config.consumer;
  }

  /** Schedules a pump on a later turn of the event loop: never inside the caller's stack. */
  wake(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pump())
      .finally(() => {
        this.pumping = undefined;
        if (this.again) this.wake();
      });
  }

  /**
   * Stops claiming and waits for running handlers (at most `drainMs`). Jobs still running then are
   * handed back (released, due at once) and their outcome is dropped: another worker takes them,
   * instead of waiting for the lease to run out.
   */
  close(drainMs: number): Promise<void> {
    // Once: a second close (the bus's, after stopConsuming) must not wait for a handed-back job again.
    this.closing ??= this.drainAndClose(drainMs);
    return this.closing;
  }

  private async drainAndClose(drainMs: number): Promise<void> {
    this.closed = true;
    this.clearTimers();
    await this.pumping;
    const drained = await waitAll(this.running, drainMs);
    this.stopHeartbeats();
    if (!drained && this.claimed.size > 0) await this.handBack();
  }

  private async handBack(): Promise<void> {
    this.aborted = true;
    const jobs = [...this.claimed.values()];
    this.claimed.clear();
    for (const job of jobs) {
      await this.config.store.release(job.id, job.token, 0, null).catch((err) =>
        this.config.logger.warn('Handing back a job failed; its lease will run out', {
          subject: this.config.subject,
          err: describeError(err),
        }),
      );
    }
    this.config.logger.warn('Shutdown: jobs still running were handed back', { subject: this.config.subject, jobs: jobs.length });
  }

  /** Stops at once without acknowledging anything: leases expire and rows are redelivered. */
  abort(): void {
    this.closed = true;
    this.aborted = true;
    this.clearTimers();
    this.stopHeartbeats();
  }

  private async pump(): Promise<void> {
    this.again = false;
    const { store, storedSubject, consumer, options } = this.config;
    try {
      if (this.inFlight >= options.concurrency) this.backlog = true;
      while (!this.closed && this.inFlight < options.concurrency) {
        const token = randomUUID();
        const limit = options.concurrency - this.inFlight;
        const jobs = await store.claim({ subject: storedSubject, consumer, limit, leaseMs: options.ackWaitMs, token });
        for (const job of jobs) this.start(job);
        this.backlog = jobs.length === limit;
        // Fewer than asked: nothing else was due a moment ago, so no second claim to find it empty.
        if (jobs.length < limit) return;
      }
    } catch (err) {
      this.backlog = true;
      this.config.logger.warn('Claiming jobs failed; will poll again', { subject: this.config.subject, err: describeError(err) });
    }
  }

  private start(job: ClaimedJob): void {
    this.inFlight++;
    this.claimed.set(job.id, job);
    const run: Promise<void> = this.run(job)
      .catch((err) =>
        this.config.logger.warn('Settling a job failed; it will be redelivered', { subject: this.config.subject, err: describeError(err) }),
      )
      .finally(() => {
        this.inFlight--;
        this.claimed.delete(job.id);
        this.running.delete(run);
        if (this.backlog) this.wake();
      });
    this.running.add(run);
  }

  private async run(job: ClaimedJob): Promise<void> {
    const { store, cls, handler, options, logger, subject, consumerName } = this.config;
    const delivery = {
      id: job.msgId,
      subject,
      consumer: consumerName,
      deliveryCount: job.deliveryCount,
      body: job.body,
      context: job.context,
    };
    // The lease is renewed while the handler runs (up to maxWorkingMs), so a long job is not handed
    // to another worker; if this process dies, the lease runs out within ackWaitMs.
    const renew = () => {
      store
        .extend(job.id, job.token, options.ackWaitMs)
        .catch((err) => logger.warn('Renewing a job lease failed', { subject, err: describeError(err) }));
    };
    const outcome = await processRenewing(delivery, cls, handler, options, logger, renew, this.heartbeats);
    if (this.aborted) return;
    if (outcome.action === 'ack') {
      await store.ack(job.id, job.token);
    } else if (outcome.action === 'retry') {
      if (await store.release(job.id, job.token, outcome.delayMs, outcome.error)) this.wakeAfter(outcome.delayMs);
    } else if (await store.bury(job.id, job.token, outcome.letter.error)) {
      await this.config.onDeadLetter(outcome.letter);
    }
  }

  private wakeAfter(delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.wake();
    }, delayMs + 5);
    timer.unref();
    this.timers.add(timer);
  }

  private stopHeartbeats(): void {
    for (const heartbeat of this.heartbeats) clearInterval(heartbeat);
    this.heartbeats.clear();
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
