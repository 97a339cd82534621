import type { BusContext, DomainErrorJson } from '@kb/contracts';

/** A message as the in-process bus persists it. */
export interface NewMessage {
  /** Stable id shown to handlers as DeliveryMeta.id (shared by every fan-out copy). */
  msgId: string;
  subject: string;
  /** JSON text of the payload, stored verbatim. */
  body: string;
  context: BusContext;
  /** Deduplication key (PublishOptions.msgId): a second insert with the same key is dropped. */
  dedupKey?: string;
}

export interface ClaimRequest {
  subject: string;
  /** Durable name for event deliveries; QUEUE_CONSUMER for queue jobs. */
  consumer: string;
  limit: number;
  /** The claim expires after this long; then the row is claimable again (redelivery). */
  leaseMs: number;
  /** Proves ownership on ack/release/bury: a later claim of the same row gets a new token. */
  token: string;
}

export interface ClaimedJob {
  id: string;
  msgId: string;
  subject: string;
  consumer: string;
  body: string;
  context: BusContext;
  /** Deliveries so far, including this one. */
  deliveryCount: number;
  token: string;
}

export interface DeadJob {
  id: string;
  msgId: string;
  subject: string;
  consumer: string;
  body: string;
  deliveryCount: number;
  error: DomainErrorJson | null;
}

/** A (subject, consumer) pair of the store, as claims name it. */
export interface ConsumerKey {
  subject: string;
  consumer: string;
}

/** Queue jobs are stored without a consumer: any durable consuming the subject may take them. */
export const QUEUE_CONSUMER = '';

/**
 * Persistence port of the in-process bus. Every operation must be atomic on its own: two
 * processes may share one store, and PGlite forbids holding a transaction across awaits.
 */
export interface QueueStore {
  /** Creates tables when the store owns its schema; safe to call repeatedly. */
  init(): Promise<void>;
  /** Stores one queue job. Returns false when the dedup key was already used. */
  insertJob(message: NewMessage): Promise<boolean>;
  /** Stores one copy of an event per durable consumer registered for its subject right now. */
  insertFanout(message: NewMessage): Promise<number>;
  registerConsumer(subject: string, consumer: string): Promise<void>;
  /**
   * The (subject, consumer) pairs that have at least one due row (pending, available, lease free or
   * expired): the bus's poll asks this once per tick and wakes only those workers, instead of every
   * worker claiming on every tick (on the embedded database, an idle claim is a planned statement).
   */
  due(): Promise<ConsumerKey[]>;
  /** Takes due rows (pending, available, lease free or expired), oldest first. */
  claim(request: ClaimRequest): Promise<ClaimedJob[]>;
  /** Keeps a claimed row's lease for `leaseMs` more while its handler still runs; false once the lease is lost. */
  extend(id: string, token: string, leaseMs: number): Promise<boolean>;
  /** Marks the row done (kept for the dedup window, then purged). */
  ack(id: string, token: string): Promise<boolean>;
  /** Gives the row back, claimable again after `delayMs`. */
  release(id: string, token: string, delayMs: number, error: DomainErrorJson | null): Promise<boolean>;
  /** Marks the row dead: it is never delivered again and stays for inspection. */
  bury(id: string, token: string, error: DomainErrorJson): Promise<boolean>;
  deadJobs(subject: string): Promise<DeadJob[]>;
  /** Deletes done rows older than the dedup window. */
  purgeDone(olderThanMs: number): Promise<void>;
}
