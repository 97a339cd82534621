import type { BusContext, DomainErrorJson, EventDef, QueueDef } from '@kb/contracts';

/** What lands on `dlq.<subject>` after the last attempt (or at once for an invalid payload). */
export interface DeadLetter<T = unknown> {
  /** The original message id (DeliveryMeta.id). */
  id: string;
  subject: string;
  /** Durable consumer that gave up on it. */
  consumer?: string;
  deliveryCount: number;
  /** The last error; for unexpected errors the real message is kept: dead letters are internal. */
  error: DomainErrorJson;
  /** The payload as it was received, before validation. */
  payload: T;
  context: BusContext;
  failedAt: string;
}

export function deadLetterSubject(subject: string): string {
  return `dlq.${subject}`;
}

/** Event definition to subscribe to the dead letters of a queue or event subject. */
export function deadLetterDef<T>(def: QueueDef<T> | EventDef<T>): EventDef<DeadLetter<T>> {
  return { kind: 'event', subject: deadLetterSubject(def.subject), stream: def.stream };
}

/** Default queue group of an RPC subject: its service, so replicas of one service share load. */
export function defaultQueueGroup(subject: string): string {
  return subject.split('.')[0] || subject;
}
