/**
 * Domain errors travel over the bus and reach the HTTP edge unchanged. Services throw them
 * with a code; only the filters (HTTP, bus) translate a code into a transport status.
 */
export const ErrorCodes = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  MULTIPLE_CREDENTIALS: 'MULTIPLE_CREDENTIALS',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  ACCOUNT_NOT_FOUND: 'ACCOUNT_NOT_FOUND',
  KB_NOT_FOUND: 'KB_NOT_FOUND',
  RESOURCE_NOT_FOUND: 'RESOURCE_NOT_FOUND',
  FIELD_NOT_FOUND: 'FIELD_NOT_FOUND',
  SERVICE_ACCOUNT_NOT_FOUND: 'SERVICE_ACCOUNT_NOT_FOUND',
  API_KEY_NOT_FOUND: 'API_KEY_NOT_FOUND',
  USER_NOT_FOUND: 'USER_NOT_FOUND',
  CONFLICT: 'CONFLICT',
  SLUG_CONFLICT: 'SLUG_CONFLICT',
  ACCOUNT_SLUG_CONFLICT: 'ACCOUNT_SLUG_CONFLICT',
  KB_SLUG_CONFLICT: 'KB_SLUG_CONFLICT',
  DUPLICATE_FILE: 'DUPLICATE_FILE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RANGE_NOT_SATISFIABLE: 'RANGE_NOT_SATISFIABLE',
  RATE_LIMITED: 'RATE_LIMITED',
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  ACCOUNT_BLOCKED: 'ACCOUNT_BLOCKED',
  BUS_TIMEOUT: 'BUS_TIMEOUT',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes] | (string & {});

/** One invalid member of a request, in the spec's 422 shape. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface DomainErrorJson {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class DomainError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    public readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static validation(issues: ValidationIssue[]): DomainError {
    const first = issues[0];
    const summary = first ? `${first.loc.join('.')}: ${first.msg}` : 'invalid request';
    return new DomainError(ErrorCodes.VALIDATION_FAILED, summary, { detail: issues });
  }

  /**
   * 429: `try_after` is the Unix time (seconds) from which a retry may succeed, as every rate limit
   * answers it (the edge turns it into `Retry-After`), `seconds` from now.
   */
  static rateLimited(message: string, seconds: number, now = Date.now()): DomainError {
    return new DomainError(ErrorCodes.RATE_LIMITED, message, { try_after: Math.ceil(now / 1000) + Math.max(1, Math.ceil(seconds)) });
  }

  static notFound(code: ErrorCode, message: string): DomainError {
    return new DomainError(code, message);
  }

  toJSON(): DomainErrorJson {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }

  static fromJSON(json: DomainErrorJson): DomainError {
    return new DomainError(json.code, json.message, json.details);
  }

  static isDomainError(err: unknown): err is DomainError {
    return err instanceof DomainError;
  }
}
