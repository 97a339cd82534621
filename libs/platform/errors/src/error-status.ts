import { ErrorCodes, type ErrorCode } from '@kb/contracts';

/** The one table that maps domain error codes to HTTP statuses. Unknown codes are 500. */
const STATUS_BY_CODE: Record<string, number> = {
  [ErrorCodes.VALIDATION_FAILED]: 422,
  [ErrorCodes.MULTIPLE_CREDENTIALS]: 400,
  [ErrorCodes.UNAUTHENTICATED]: 401,
  [ErrorCodes.QUOTA_EXCEEDED]: 402,
  [ErrorCodes.ACCOUNT_BLOCKED]: 402,
  [ErrorCodes.FORBIDDEN]: 403,
  [ErrorCodes.NOT_FOUND]: 404,
  [ErrorCodes.ROUTE_NOT_FOUND]: 404,
  [ErrorCodes.ACCOUNT_NOT_FOUND]: 404,
  [ErrorCodes.KB_NOT_FOUND]: 404,
  [ErrorCodes.RESOURCE_NOT_FOUND]: 404,
  [ErrorCodes.FIELD_NOT_FOUND]: 404,
  [ErrorCodes.SERVICE_ACCOUNT_NOT_FOUND]: 404,
  [ErrorCodes.API_KEY_NOT_FOUND]: 404,
  [ErrorCodes.USER_NOT_FOUND]: 404,
  [ErrorCodes.CONFLICT]: 409,
  [ErrorCodes.SLUG_CONFLICT]: 409,
  [ErrorCodes.ACCOUNT_SLUG_CONFLICT]: 409,
  [ErrorCodes.KB_SLUG_CONFLICT]: 409,
  [ErrorCodes.DUPLICATE_FILE]: 409,
  [ErrorCodes.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCodes.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCodes.RANGE_NOT_SATISFIABLE]: 416,
  [ErrorCodes.RATE_LIMITED]: 429,
  [ErrorCodes.SERVICE_UNAVAILABLE]: 503,
  // A model provider of the KB failed (its embedding model for a query, its generative model): the
  // answer says so in the service's own words (never the provider's body), not as an internal error.
  EMBEDDING_FAILED: 503,
  GENERATION_FAILED: 503,
  [ErrorCodes.BUS_TIMEOUT]: 504,
  [ErrorCodes.INTERNAL]: 500,
};

export function httpStatusFor(code: ErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

/** Codes a client may act on; used by tests to check the table covers every declared code. */
export function mappedCodes(): string[] {
  return Object.keys(STATUS_BY_CODE);
}
