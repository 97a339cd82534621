import { invalidBlobInput } from './blob-errors';

export const MAX_KEY_BYTES = 1024;
/** Leaves room under NAME_MAX (255) for the fs driver's file suffix. */
export const MAX_SEGMENT_BYTES = 200;
/**
 * Characters that are safe as a file name on POSIX, as an S3 key and inside a URL path once
 * percent-encoded. `#` is left out on purpose: the fs driver uses it to mark object files.
 */
const SEGMENT = /^[A-Za-z0-9._~=@:+-]+$/;

/** Returns why `key` is not a valid blob key, or null when it is. */
export function blobKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'key must be a non-empty string';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `key must be at most ${MAX_KEY_BYTES} bytes`;
  if (key.startsWith('/')) return 'key must not start with "/"';
  if (key.endsWith('/')) return 'key must not end with "/"';
  return segmentsProblem(key.split('/'));
}

/**
 * A prefix is a key with an optional trailing `/`, or a partial last segment (`a/b` matches
 * `a/b2`), like S3. The empty prefix means everything, so only `list` accepts it.
 */
export function blobPrefixProblem(prefix: unknown, options: { allowEmpty: boolean; requireTrailingSlash: boolean }): string | null {
  if (typeof prefix !== 'string') return 'prefix must be a string';
  if (prefix === '') return options.allowEmpty ? null : 'prefix must not be empty';
  if (options.requireTrailingSlash && !prefix.endsWith('/')) return 'prefix must end with "/" so that sibling keys are not matched';
  if (Buffer.byteLength(prefix, 'utf8') > MAX_KEY_BYTES) return `prefix must be at most ${MAX_KEY_BYTES} bytes`;
  if (prefix.startsWith('/')) return 'prefix must not start with "/"';
  const segments = prefix.split('/');
  if (prefix.endsWith('/')) segments.pop();
  return segmentsProblem(segments);
}

function segmentsProblem(segments: string[]): string | null {
  for (const segment of segments) {
    if (segment === '') return 'key must not contain empty segments ("//")';
    if (segment === '.' || segment === '..') return 'key must not contain "." or ".." segments';
    if (!SEGMENT.test(segment)) return `segment "${printable(segment)}" has characters outside [A-Za-z0-9._~=@:+-]`;
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return `segments must be at most ${MAX_SEGMENT_BYTES} bytes`;
  }
  return null;
}

/** Error messages end up in logs: never echo control characters from caller input. */
function printable(value: string): string {
  // eslint-disable-next-line no-control-regex -- the point is to replace control characters
  return value.replace(/[\u0000-\u001f\u007f\\]/g, '?').slice(0, 64);
}

export function isValidBlobKey(key: unknown): key is string {
  return blobKeyProblem(key) === null;
}

export function assertValidBlobKey(key: string, field = 'key'): void {
  const problem = blobKeyProblem(key);
  if (problem) throw invalidBlobInput(field, problem);
}

export function assertValidBlobPrefix(prefix: string, options: { allowEmpty: boolean; requireTrailingSlash: boolean }): void {
  const problem = blobPrefixProblem(prefix, options);
  if (problem) throw invalidBlobInput('prefix', problem);
}

/** Percent-encodes each segment so the key can sit in a URL path without changing meaning. */
export function encodeBlobKeyForUrl(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
