import type { DomainErrorJson } from '@kb/contracts';
import {
  QUEUE_CONSUMER,
  type ClaimedJob,
  type ConsumerKey,
  type ClaimRequest,
  type DeadJob,
  type NewMessage,
  type QueueStore,
} from './queue-store';

interface Row {
  id: number;
  message: NewMessage;
  consumer: string;
  status: 'pending' | 'done' | 'dead';
  attempts: number;
  availableAt: number;
  lockedUntil: number;
  token: string | null;
  error: DomainErrorJson | null;
  finishedAt: number;
}

/** QueueStore in memory: for unit tests and ephemeral subscriptions. Survives bus restarts, not process restarts. */
export class MemoryQueueStore implements QueueStore {
  private readonly rows = new Map<number, Row>();
  private readonly consumers = new Map<string, Set<string>>();
  private nextId = 1;

  async init(): Promise<void> {
    return;
  }

  async insertJob(message: NewMessage): Promise<boolean> {
    return this.insert(message, QUEUE_CONSUMER);
  }

  async insertFanout(message: NewMessage): Promise<number> {
    let inserted = 0;
    for (const consumer of this.consumers.get(message.subject) ?? []) {
      if (this.insert(message, consumer)) inserted++;
    }
    return inserted;
  }

  async registerConsumer(subject: string, consumer: string): Promise<void> {
    const set = this.consumers.get(subject) ?? new Set<string>();
    set.add(consumer);
    this.consumers.set(subject, set);
  }

  async due(): Promise<ConsumerKey[]> {
    const now = Date.now();
    const keys = new Map<string, ConsumerKey>();
    for (const row of this.rows.values()) {
      if (row.status !== 'pending' || row.availableAt > now || row.lockedUntil > now) continue;
      keys.set(`${row.message.subject}\u0000${row.consumer}`, { subject: row.message.subject, consumer: row.consumer });
    }
    return [...keys.values()];
  }

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    const now = Date.now();
    const claimed: ClaimedJob[] = [];
    for (const row of this.rows.values()) {
      if (claimed.length >= request.limit) break;
      const due = row.status === 'pending' && row.availableAt <= now && row.lockedUntil <= now;
      if (!due || row.message.subject !== request.subject || row.consumer !== request.consumer) continue;
      row.attempts++;
      row.lockedUntil = now + request.leaseMs;
      row.token = request.token;
      claimed.push({
        id: String(row.id),
        msgId: row.message.msgId,
        subject: row.message.subject,
        consumer: row.consumer,
        body: row.message.body,
        context: { ...row.message.context },
        deliveryCount: row.attempts,
        token: request.token,
      });
    }
    return claimed;
  }

  async extend(id: string, token: string, leaseMs: number): Promise<boolean> {
    const row = this.rows.get(Number(id));
    if (!row || row.token !== token || row.status !== 'pending') return false;
    row.lockedUntil = Date.now() + leaseMs;
    return true;
  }

  async ack(id: string, token: string): Promise<boolean> {
    return this.update(id, token, (row) => {
      row.status = 'done';
      row.finishedAt = Date.now();
    });
  }

  async release(id: string, token: string, delayMs: number, error: DomainErrorJson | null): Promise<boolean> {
    return this.update(id, token, (row) => {
      row.availableAt = Date.now() + delayMs;
      row.error = error;
    });
  }

  async bury(id: string, token: string, error: DomainErrorJson): Promise<boolean> {
    return this.update(id, token, (row) => {
      row.status = 'dead';
      row.error = error;
      row.finishedAt = Date.now();
    });
  }

  async deadJobs(subject: string): Promise<DeadJob[]> {
    return [...this.rows.values()]
      .filter((row) => row.status === 'dead' && row.message.subject === subject)
      .map((row) => ({
        id: String(row.id),
        msgId: row.message.msgId,
        subject,
        consumer: row.consumer,
        body: row.message.body,
        deliveryCount: row.attempts,
        error: row.error,
      }));
  }

  async purgeDone(olderThanMs: number): Promise<void> {
    const limit = Date.now() - olderThanMs;
    for (const [id, row] of this.rows) {
      if (row.status === 'done' && row.finishedAt < limit) this.rows.delete(id);
    }
  }

  /** Rows not yet done or dead; for tests and metrics. */
  pendingCount(): number {
    return [...this.rows.values()].filter((row) => row.status === 'pending').length;
  }

  private insert(message: NewMessage, consumer: string): boolean {
    if (message.dedupKey !== undefined) {
      for (const row of this.rows.values()) {
        const same = row.message.subject === message.subject && row.consumer === consumer && row.message.dedupKey === message.dedupKey;
        if (same) return false;
      }
    }
    const id = this.nextId++;
    this.rows.set(id, {
      id,
      message,
      consumer,
      status: 'pending',
      attempts: 0,
      availableAt: 0,
      lockedUntil: 0,
      token: null,
      error: null,
      finishedAt: 0,
    });
    return true;
  }

  private update(id: string, token: string, change: (row: Row) => void): boolean {
    const row = this.rows.get(Number(id));
    if (!row || row.token !== token || row.status !== 'pending') return false;
    change(row);
    row.token = null;
    row.lockedUntil = 0;
    return true;
  }
}
