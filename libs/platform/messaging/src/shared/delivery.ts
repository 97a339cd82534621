import { ErrorCodes, type BusContext, type DomainErrorJson } from '@kb/contracts';
import type { ClassConstructor } from 'class-transformer';
import type { DeliveryHandler } from '../message-bus';
import { decideAfterFailure, type ResolvedConsumeOptions } from './backoff';
import type { BusLogger } from './bus-logger';
import type { DeadLetter } from './dead-letter';
import { describeError } from './bus-logger';
import { InvalidPayloadError, toDomainError, validateIncoming } from './envelope';

export interface IncomingDelivery {
  id: string;
  /** Subject as the application knows it (without the bus prefix). */
  subject: string;
  consumer?: string;
  deliveryCount: number;
  /** The JSON text exactly as stored or received. */
  body: string;
  context: BusContext;
}

export type DeliveryOutcome =
  { action: 'ack' } | { action: 'retry'; delayMs: number; error: DomainErrorJson } | { action: 'dead'; letter: DeadLetter };

/**
 * Renews a running delivery's ack wait through `beat` (three times per ack wait, so one late or
 * lost beat does not hand a live job to another worker) until `maxWorkingMs` is covered. Returns
 * the function that stops it. Without `maxWorkingMs` beyond the ack wait it does nothing: the ack
 * wait is then the handler's time limit, as before.
 */
export function startHeartbeat(options: ResolvedConsumeOptions, beat: () => void): NodeJS.Timeout | undefined {
  if (options.maxWorkingMs <= options.ackWaitMs) return undefined;
  const started = Date.now();
  const timer: NodeJS.Timeout = setInterval(
    () => {
      // The last renewal must not carry the lease past maxWorkingMs.
      if (Date.now() - started + options.ackWaitMs > options.maxWorkingMs) clearInterval(timer);
      else beat();
    },
    Math.max(50, Math.floor(options.ackWaitMs / 3)),
  );
  timer.unref();
  return timer;
}

/**
 * processDelivery while `renew` keeps the delivery's ack wait alive (see startHeartbeat). The
 * timer sits in `heartbeats` while it runs, so a worker that aborts can stop renewing at once.
 */
export async function processRenewing<T>(
  delivery: IncomingDelivery,
  cls: ClassConstructor<object> | undefined,
  handler: DeliveryHandler<T>,
  options: ResolvedConsumeOptions,
  logger: BusLogger,
  renew: () => void,
  heartbeats: Set<NodeJS.Timeout>,
): Promise<DeliveryOutcome> {
  const heartbeat = startHeartbeat(options, renew);
  if (heartbeat) heartbeats.add(heartbeat);
  try {
    return await processDelivery(delivery, cls, handler, options, logger);
  } finally {
    if (heartbeat) {
      clearInterval(heartbeat);
      heartbeats.delete(heartbeat);
    }
  }
}

/**
 * Runs one delivery of a queue job or durable event and says what the transport must do with
 * it. Shared by both transports so retries and dead letters behave identically.
 */
export async function processDelivery<T>(
  delivery: IncomingDelivery,
  cls: ClassConstructor<object> | undefined,
  handler: DeliveryHandler<T>,
  options: ResolvedConsumeOptions,
  logger: BusLogger,
): Promise<DeliveryOutcome> {
  let plain: unknown;
  try {
    plain = JSON.parse(delivery.body);
  } catch {
    return dead(delivery, null, { code: ErrorCodes.VALIDATION_FAILED, message: 'Payload is not valid JSON' });
  }
  // Redelivered after the ack wait of the last attempt ran out (a hung or crashed handler).
  if (delivery.deliveryCount > options.maxDeliver) {
    return dead(delivery, plain, { code: ErrorCodes.BUS_TIMEOUT, message: `Not acknowledged after ${options.maxDeliver} deliveries` });
  }
  try {
    const payload = validateIncoming<T>(cls, plain);
    await handler(payload, {
      id: delivery.id,
      subject: delivery.subject,
      deliveryCount: delivery.deliveryCount,
      context: delivery.context,
    });
    return { action: 'ack' };
  } catch (err) {
    const permanent = err instanceof InvalidPayloadError;
    const fields = { subject: delivery.subject, consumer: delivery.consumer, message_id: delivery.id, delivery: delivery.deliveryCount };
    const domain = permanent ? err.domainError : toDomainError(err, logger, fields);
    const json = domain.toJSON();
    // Dead letters are internal: keep the real reason next to the public error id.
    const error: DomainErrorJson =
      domain.code === ErrorCodes.INTERNAL && err instanceof Error ? { ...json, details: { ...json.details, reason: err.message } } : json;
    const decision = decideAfterFailure(delivery.deliveryCount, options, permanent);
    if (decision.action === 'retry') {
      logger.warn('Delivery failed; will retry', { ...fields, delay_ms: decision.delayMs, code: error.code });
      return { action: 'retry', delayMs: decision.delayMs, error };
    }
    logger.error('Delivery dead-lettered', { ...fields, code: error.code, err: permanent ? undefined : describeError(err) });
    return dead(delivery, plain, error);
  }
}

function dead(delivery: IncomingDelivery, payload: unknown, error: DomainErrorJson): DeliveryOutcome {
  return {
    action: 'dead',
    letter: {
      id: delivery.id,
      subject: delivery.subject,
      consumer: delivery.consumer,
      deliveryCount: delivery.deliveryCount,
      error,
      payload,
      context: delivery.context,
      failedAt: new Date().toISOString(),
    },
  };
}
