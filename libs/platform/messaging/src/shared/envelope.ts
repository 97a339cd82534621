import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, validatePayload, type DomainErrorJson } from '@kb/contracts';
import type { ClassConstructor } from 'class-transformer';
import { describeError, type BusLogger } from './bus-logger';

/** What a responder sends back: the caller only ever sees `data` or a DomainError. */
export type ReplyEnvelope<T> = { ok: true; data: T } | { ok: false; error: DomainErrorJson };

/** Both transports serialise exactly like this, so Dates become strings everywhere. */
export function toJson(value: unknown): string {
  // JSON.stringify(undefined) is undefined, which is not a valid body: send null instead.
  return JSON.stringify(value) ?? 'null';
}

export function jsonRoundTrip<T>(value: T): T {
  return JSON.parse(toJson(value)) as T;
}

export function successEnvelope<T>(data: T): ReplyEnvelope<T> {
  return { ok: true, data };
}

/**
 * Turns anything a handler threw into a reply. DomainErrors pass through unchanged; anything
 * else is hidden behind INTERNAL with an error id, and the real error is logged with that id.
 */
export function errorEnvelope(err: unknown, logger: BusLogger, fields: Record<string, unknown>): ReplyEnvelope<never> {
  return { ok: false, error: toDomainError(err, logger, fields).toJSON() };
}

export function toDomainError(err: unknown, logger: BusLogger, fields: Record<string, unknown>): DomainError {
  if (DomainError.isDomainError(err)) return err;
  const errorId = randomUUID();
  // Last line of defence: a value the database refuses as data (SQLSTATE class 22: not a uuid, a NUL
  // byte, out of range…) came from the request; validation should have named it, but it is the
  // caller's input, not a fault of the service.
  if (isDataException(err)) {
    logger.warn('Input refused by the database (validation should have caught it)', {
      ...fields,
      error_id: errorId,
      err: describeError(err),
    });
    return DomainError.validation([{ loc: [], msg: 'A value of the request is not valid for what it names', type: 'value_error' }]);
  }
  logger.error('Unhandled error in bus handler', { ...fields, error_id: errorId, err: describeError(err) });
  return new DomainError(ErrorCodes.INTERNAL, 'Internal error', { error_id: errorId });
}

/** Caller side: returns the data or rethrows the responder's DomainError. */
export function openEnvelope<T>(envelope: ReplyEnvelope<T>): T {
  if (envelope.ok) return envelope.data;
  return rethrow(envelope.error);
}

function rethrow(json: DomainErrorJson | undefined): never {
  if (!json || typeof json.code !== 'string') throw new DomainError(ErrorCodes.INTERNAL, 'Malformed reply from bus');
  throw DomainError.fromJSON(json);
}

export function decodeEnvelope<T>(text: string): T {
  let parsed: ReplyEnvelope<T>;
  try {
    parsed = JSON.parse(text) as ReplyEnvelope<T>;
  } catch {
    throw new DomainError(ErrorCodes.INTERNAL, 'Malformed reply from bus');
  }
  if (parsed === null || typeof parsed !== 'object' || typeof parsed.ok !== 'boolean') {
    throw new DomainError(ErrorCodes.INTERNAL, 'Malformed reply from bus');
  }
  return openEnvelope(parsed);
}

/** Marks payloads that can never succeed, so consumers dead-letter them without retrying. */
export class InvalidPayloadError extends Error {
  constructor(public readonly domainError: DomainError) {
    super(domainError.message);
    this.name = 'InvalidPayloadError';
  }
}

/** Receiving side of every kind: validates against the def's class when it has one. */
export function validateIncoming<T>(cls: ClassConstructor<object> | undefined, plain: unknown): T {
  if (!cls) return plain as T;
  try {
    return validatePayload(cls, plain) as T;
  } catch (err) {
    if (DomainError.isDomainError(err)) throw new InvalidPayloadError(err);
    throw err;
  }
}

export function timeoutError(subject: string, timeoutMs: number): DomainError {
  return new DomainError(ErrorCodes.BUS_TIMEOUT, `No reply on ${subject} within ${timeoutMs} ms`, { subject, timeout_ms: timeoutMs });
}

export function unavailableError(subject: string): DomainError {
  return new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `No service answers ${subject}`, { subject });
}

/** A PostgreSQL data exception (SQLSTATE class 22), as the pg driver reports it (also wrapped by TypeORM). */
export function isDataException(err: unknown): boolean {
  const code =
    (err as { code?: unknown; driverError?: { code?: unknown } } | null)?.code ??
    (err as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}
