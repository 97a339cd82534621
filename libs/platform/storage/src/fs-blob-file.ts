import type { FileHandle } from 'node:fs/promises';
import { DomainError, ErrorCodes } from '@kb/contracts';

/**
 * On-disk format of one fs object: the bytes, then a JSON trailer (content type, md5, metadata),
 * then the trailer's length and a magic tag. Bytes and description live in ONE file so a single
 * rename publishes both atomically — a sidecar file would need a second rename, and a reader
 * between the two would see new bytes with the old content type.
 *
 *   [data][trailer JSON][uint32 BE trailer length][MAGIC]
 */
const MAGIC = Buffer.from('KBBLOB1\n', 'ascii');
const FOOTER_BYTES = 4 + MAGIC.length;
const MAX_TRAILER_BYTES = 64 * 1024;
/** Object files carry a suffix with a character keys may not contain, so `a/b` (file) and `a/b/c` (directory `a/b`) never collide. */
export const OBJECT_FILE_SUFFIX = '#blob';

export interface FsBlobTrailer {
  v: 1;
  size: number;
  md5: string;
  contentType: string;
  metadata: Record<string, string>;
}

export function encodeTrailer(trailer: FsBlobTrailer): Buffer {
  const json = Buffer.from(JSON.stringify(trailer), 'utf8');
  const footer = Buffer.alloc(FOOTER_BYTES);
  footer.writeUInt32BE(json.length, 0);
  MAGIC.copy(footer, 4);
  return Buffer.concat([json, footer]);
}

export interface FsBlobDescription {
  trailer: FsBlobTrailer;
  lastModified: Date;
}

/** Reads the trailer of an open object file; the caller owns the handle. */
export async function readTrailer(handle: FileHandle, key: string): Promise<FsBlobDescription> {
  const info = await handle.stat();
  if (info.size < FOOTER_BYTES) throw corrupt(key, 'file too short');
  const footer = Buffer.alloc(FOOTER_BYTES);
  await handle.read(footer, 0, FOOTER_BYTES, info.size - FOOTER_BYTES);
  if (!footer.subarray(4).equals(MAGIC)) throw corrupt(key, 'bad magic');
  const length = footer.readUInt32BE(0);
  if (length > MAX_TRAILER_BYTES || length > info.size - FOOTER_BYTES) throw corrupt(key, 'bad trailer length');
  const json = Buffer.alloc(length);
  await handle.read(json, 0, length, info.size - FOOTER_BYTES - length);
  let trailer: FsBlobTrailer;
  try {
    trailer = JSON.parse(json.toString('utf8')) as FsBlobTrailer;
  } catch {
    throw corrupt(key, 'unreadable trailer');
  }
  if (trailer.v !== 1 || trailer.size !== info.size - FOOTER_BYTES - length) throw corrupt(key, 'size mismatch');
  return { trailer, lastModified: new Date(info.mtimeMs) };
}

function corrupt(key: string, why: string): DomainError {
  return new DomainError(ErrorCodes.INTERNAL, `blob file for ${key} is corrupt (${why})`, { key });
}
