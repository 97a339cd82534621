import { DomainError, ErrorCodes } from '@kb/contracts';

/** The shared codes this library raises (the HTTP filter maps RANGE_NOT_SATISFIABLE to 416). */
export const BlobErrorCodes = {
  RANGE_NOT_SATISFIABLE: ErrorCodes.RANGE_NOT_SATISFIABLE,
} as const;

export function blobNotFound(key: string): DomainError {
  return new DomainError(ErrorCodes.NOT_FOUND, `blob not found: ${key}`, { key });
}

export function invalidBlobInput(field: string, msg: string): DomainError {
  return DomainError.validation([{ loc: ['blob', field], msg, type: 'value_error' }]);
}

export function payloadTooLarge(maxBytes: number): DomainError {
  return new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `upload exceeds the limit of ${maxBytes} bytes`, { max_bytes: maxBytes });
}

export function rangeNotSatisfiable(size: number): DomainError {
  return new DomainError(BlobErrorCodes.RANGE_NOT_SATISFIABLE, `requested range not satisfiable (object size ${size})`, { size });
}

export function sizeMismatch(declared: number, actual: string): DomainError {
  return invalidBlobInput('size', `declared size ${declared} does not match the stream (${actual})`);
}

/** Duck-typed on purpose: errors from Node's core can come from another realm (jest, vm), failing `instanceof Error`. */
export function isNodeError(err: unknown, ...codes: string[]): err is NodeJS.ErrnoException {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && codes.includes(code);
}
