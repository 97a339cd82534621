import { BLOB_DEFAULT_CONTENT_TYPE, MAX_PRESIGN_SECONDS, type ByteRange, type PresignGetOptions, type PutOptions } from './blob-store';
import { invalidBlobInput, payloadTooLarge, rangeNotSatisfiable } from './blob-errors';

/** S3 caps user metadata at 2 KiB; the fs driver enforces the same so code moves between drivers. */
export const MAX_METADATA_BYTES = 2048;
const METADATA_KEY = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** Names S3 clients treat as headers, not user metadata: they would not round-trip. */
const RESERVED_METADATA_KEYS = new Set([
  'content-type',
  'content-length',
  'content-md5',
  'content-encoding',
  'content-language',
  'content-disposition',
  'cache-control',
  'expires',
  'etag',
  'last-modified',
]);
const CONTENT_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[A-Za-z0-9!#$&^_.+-]+))*$/;

export interface ValidPutOptions {
  contentType: string;
  metadata: Record<string, string>;
  size?: number;
  maxBytes?: number;
}

export function validatePutOptions(options: PutOptions = {}): ValidPutOptions {
  const contentType = options.contentType?.trim() || BLOB_DEFAULT_CONTENT_TYPE;
  if (contentType.length > 255 || !CONTENT_TYPE.test(contentType)) throw invalidBlobInput('contentType', 'not a valid media type');
  for (const [name, value] of [
    ['size', options.size],
    ['maxBytes', options.maxBytes],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw invalidBlobInput(name, 'must be a non-negative integer');
  }
  // A declared size over the limit fails before a single byte is read.
  if (options.size !== undefined && options.maxBytes !== undefined && options.size > options.maxBytes)
    throw payloadTooLarge(options.maxBytes);
  return { contentType, metadata: validateMetadata(options.metadata ?? {}), size: options.size, maxBytes: options.maxBytes };
}

function validateMetadata(metadata: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let bytes = 0;
  for (const [key, value] of Object.entries(metadata)) {
    if (!METADATA_KEY.test(key) || key.startsWith('x-amz-') || RESERVED_METADATA_KEYS.has(key)) {
      throw invalidBlobInput('metadata', `metadata key "${key.slice(0, 64)}" must match [a-z0-9][a-z0-9-]* and not be a header name`);
    }
    if (typeof value !== 'string') throw invalidBlobInput('metadata', `metadata value of "${key}" must be a string`);
    bytes += key.length + Buffer.byteLength(encodeMetadataValue(value));
    out[key] = value;
  }
  if (bytes > MAX_METADATA_BYTES) throw invalidBlobInput('metadata', `metadata must be at most ${MAX_METADATA_BYTES} bytes`);
  return out;
}

/** HTTP headers carry ASCII only; percent-encoding keeps any string intact through S3. */
export function encodeMetadataValue(value: string): string {
  return encodeURIComponent(value);
}

export function decodeMetadataValue(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // written by another tool without our encoding
  }
}

/**
 * Resolves an HTTP-style inclusive range against the object size: `end` past the last byte is
 * clamped (as HTTP does), a start at or past the end is unsatisfiable.
 */
export function resolveRange(range: ByteRange, size: number): { start: number; end: number } {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start))) {
    throw rangeNotSatisfiable(size);
  }
  if (start >= size) throw rangeNotSatisfiable(size);
  return { start, end: end === undefined ? size - 1 : Math.min(end, size - 1) };
}

export function validatePresignOptions(options: PresignGetOptions): void {
  const { expiresInSeconds, filename } = options;
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw invalidBlobInput('expiresInSeconds', `must be an integer between 1 and ${MAX_PRESIGN_SECONDS}`);
  }
  // eslint-disable-next-line no-control-regex -- control characters would break the header
  if (filename !== undefined && (filename.length === 0 || filename.length > 255 || /[\u0000-\u001f\u007f]/.test(filename))) {
    throw invalidBlobInput('filename', 'must be 1-255 characters without control characters');
  }
}
