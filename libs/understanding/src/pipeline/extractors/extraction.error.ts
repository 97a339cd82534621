export type ExtractionErrorCode =
  | 'UNSUPPORTED_TYPE'
  | 'PASSWORD_REQUIRED'
  | 'WRONG_PASSWORD'
  | 'CORRUPT_FILE'
  | 'TOO_LARGE'
  | 'OCR_FAILED'
  | 'FORBIDDEN_ADDRESS'
  | 'INVALID_SELECTOR'
  | 'FETCH_FAILED'
  | 'FILE_NOT_FOUND'
  | 'NO_TRANSCRIBER'
  | 'NO_AUDIO'
  | 'TRANSCRIPTION_FAILED'
  | 'TRANSCRIPTION_UNAVAILABLE'
  | 'DECODER_UNAVAILABLE';

/**
 * The one error the extractors throw. Callers map `code` onto the field's error record; anything
 * else escaping an extractor is a bug, which is why parser failures are wrapped as CORRUPT_FILE.
 */
export class ExtractionError extends Error {
  constructor(
    message: string,
    readonly code: ExtractionErrorCode,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** Runs a parser and turns whatever it throws (other than our own errors) into CORRUPT_FILE. */
export async function asCorrupt<T>(what: string, run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ExtractionError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new ExtractionError(`${what} could not be read: ${reason}`, 'CORRUPT_FILE');
  }
}
