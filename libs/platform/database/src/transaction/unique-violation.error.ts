import { DomainError, ErrorCodes, type ErrorCode } from '@kb/contracts';

/** SQLSTATE unique_violation. */
export const UNIQUE_VIOLATION = '23505';

export interface UniqueViolationOptions {
  /** Domain error code to throw. Default CONFLICT. */
  code?: ErrorCode;
  /** Human message for the client. Default: "<constraint> already exists" wording without values. */
  message?: string;
  /** Translate only violations of these constraints (by name); others are rethrown unchanged. */
  constraints?: readonly string[];
}

interface PgErrorFields {
  code?: unknown;
  constraint?: unknown;
  table?: unknown;
  driverError?: unknown;
}

/** True when `err` (a pg error or TypeORM's QueryFailedError around one) is a unique violation. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const fields = pgErrorFields(err);
  if (!fields || fields.code !== UNIQUE_VIOLATION) return false;
  return constraint === undefined || fields.constraint === constraint;
}

/** The DomainError a unique violation stands for, or undefined when `err` is something else. */
export function uniqueViolationToDomainError(err: unknown, options: UniqueViolationOptions = {}): DomainError | undefined {
  const fields = pgErrorFields(err);
  if (!fields || fields.code !== UNIQUE_VIOLATION) return undefined;
  const constraint = typeof fields.constraint === 'string' ? fields.constraint : undefined;
  if (options.constraints && (!constraint || !options.constraints.includes(constraint))) return undefined;
  // The driver's detail names the duplicate values; clients get the constraint only.
  return new DomainError(options.code ?? ErrorCodes.CONFLICT, options.message ?? 'the record already exists', {
    ...(constraint ? { constraint } : {}),
  });
}

/** Runs `work`; a unique violation becomes a DomainError, anything else propagates unchanged. */
export async function translateUniqueViolation<T>(work: () => Promise<T>, options: UniqueViolationOptions = {}): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw uniqueViolationToDomainError(err, options) ?? err;
  }
}

function pgErrorFields(err: unknown): PgErrorFields | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const fields = err as PgErrorFields;
  if (fields.code !== undefined) return fields;
  // TypeORM copies the fields onto QueryFailedError, but look inside too in case a wrapper did not.
  return fields.driverError !== undefined ? pgErrorFields(fields.driverError) : undefined;
}
