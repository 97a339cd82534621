import { DomainError, type ProcessFieldErrorDto } from '@kb/contracts';
import { EMBEDDING_CONFIG_INVALID, EMBEDDING_FAILED } from './analysis';
import { ExtractionError, type ExtractionErrorCode } from './extractors';

/** HTTP-like numbers for the field error's `code`; `code_str` carries the precise reason. */
const STATUS: Record<ExtractionErrorCode, number> = {
  UNSUPPORTED_TYPE: 415,
  PASSWORD_REQUIRED: 401,
  WRONG_PASSWORD: 401,
  CORRUPT_FILE: 422,
  TOO_LARGE: 413,
  OCR_FAILED: 500,
  FORBIDDEN_ADDRESS: 403,
  INVALID_SELECTOR: 422,
  FETCH_FAILED: 502,
  FILE_NOT_FOUND: 404,
  NO_TRANSCRIBER: 501,
  NO_AUDIO: 422,
  TRANSCRIPTION_FAILED: 502,
  TRANSCRIPTION_UNAVAILABLE: 503,
  DECODER_UNAVAILABLE: 503,
};

/**
 * Worth another attempt: the page or provider may answer next time, and a redelivered job may land
 * on a worker that has ffmpeg.
 */
const TRANSIENT = new Set<ExtractionErrorCode>(['FETCH_FAILED', 'TRANSCRIPTION_UNAVAILABLE', 'DECODER_UNAVAILABLE']);

/**
 * The field error for a failure no retry can fix, or undefined for one the worker should retry
 * (transient) or that is a bug (anything else).
 */
export function extractedError(err: unknown): ProcessFieldErrorDto | undefined {
  if (err instanceof ExtractionError) {
    return TRANSIENT.has(err.code) ? undefined : { body: err.message, code: STATUS[err.code], code_str: err.code };
  }
  if (
    err instanceof DomainError &&
    (err.code === EMBEDDING_CONFIG_INVALID || (err.code === EMBEDDING_FAILED && err.details?.['retryable'] === false))
  ) {
    return { body: err.message, code: 500, code_str: err.code };
  }
  return undefined;
}

/** The error published after the last attempt: an ExtractionError keeps its code (FETCH_FAILED). */
export function finalError(err: unknown, attempts: number): ProcessFieldErrorDto {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ExtractionError)
    return { body: `${message} (after ${attempts} attempts)`, code: STATUS[err.code], code_str: err.code };
  return { body: `Processing failed after ${attempts} attempts: ${message}`, code: 500, code_str: 'PROCESSING_FAILED' };
}
