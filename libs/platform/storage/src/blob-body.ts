import { Readable } from 'node:stream';
import { invalidBlobInput } from './blob-errors';
import type { BlobBody } from './blob-store';

/** One stream type for every body, so both drivers run a single code path with one meter. */
export function toReadable(body: BlobBody): Readable {
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    // Wrapped in an array: Readable.from(buffer) would emit one chunk per byte.
    return Readable.from([typeof body === 'string' ? Buffer.from(body, 'utf8') : body], { objectMode: false });
  }
  if (body instanceof Readable) return body;
  throw invalidBlobInput('body', 'must be a Readable stream, a Buffer or a string');
}
