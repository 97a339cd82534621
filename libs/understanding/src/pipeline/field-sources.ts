import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError, ErrorCodes } from '@kb/contracts';
import type { OutboundHttp } from '@kb/platform/net';
import type { BlobGetResult, BlobStore } from '@kb/platform/storage';
import { DEFAULT_MAX_FILE_BYTES, detectMediaType, ExtractionError, fetchPage, type FetchedMedia, type FetchedPage } from './extractors';

/** A file entry as content stores it (field value `file`, or a message attachment). */
export interface FileSource {
  uri?: string;
  filename?: string;
  content_type?: string;
  md5?: string;
  extra_headers?: Record<string, string>;
  /** base64; only message attachments carry bytes inline. */
  payload?: string;
}

export interface FileBytes {
  data: Buffer;
  contentType?: string;
}

export interface ReadOptions {
  /** The guarded client for http(s) addresses (default: the process's). */
  http?: OutboundHttp;
  maxBytes?: number;
}

const BLOB_PREFIX = 'blob:';

/**
 * The bytes of a file: inline, from the blob store (`blob:<key>`), or fetched from an http(s)
 * address through the SSRF guard with the entry's `extra_headers`. A missing blob is permanent
 * (the resource or its upload is gone), so it is reported as an ExtractionError, not retried.
 */
export async function readFileSource(blobs: BlobStore | undefined, file: FileSource, options: ReadOptions): Promise<FileBytes> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FILE_BYTES;
  if (file.payload !== undefined) return { data: Buffer.from(file.payload, 'base64'), contentType: file.content_type };
  const uri = file.uri ?? '';
  if (uri.startsWith(BLOB_PREFIX)) {
    if (!blobs) throw new Error('this process has no blob store to read file fields from');
    return { data: await readBlob(blobs, uri.slice(BLOB_PREFIX.length), maxBytes), contentType: file.content_type };
  }
  if (!/^https?:\/\//i.test(uri))
    throw new ExtractionError(`The file address ${JSON.stringify(uri)} is neither a blob nor an http(s) URL`, 'FORBIDDEN_ADDRESS');
  const page = await fetchPage(uri, { headers: file.extra_headers, http: options.http, maxBytes, timeoutMs: 120_000 });
  return bytesOf(file, page);
}

function bytesOf(file: FileSource, page: Exclude<FetchedPage, FetchedMedia>): FileBytes {
  // A declared content type is the client's word about its own file; the server's comes second.
  const contentType = file.content_type ?? page.contentType.split(';')[0];
  return { data: page.kind === 'html' ? Buffer.from(page.html, 'utf8') : page.data, contentType };
}

/** A recording to stream to disk, wherever it is (blob store or a URL). */
export interface MediaSource {
  type: string;
  /** Streams the recording to `path`; resolves to its MD5 (hex). TOO_LARGE above `maxBytes`. */
  spool(path: string, maxBytes: number): Promise<string>;
  /** Releases what `spool` would have read, when it is not called. */
  discard(): Promise<void>;
}

/**
 * A file field's content: a recording (stored, or behind an http(s) address) to stream to disk, or
 * the bytes of anything else. An address is fetched once either way.
 */
export async function openFileSource(
  blobs: BlobStore | undefined,
  file: FileSource,
  options: ReadOptions,
): Promise<{ media: MediaSource } | { bytes: FileBytes }> {
  const stored = await storedMedia(blobs, file);
  if (stored) return { media: { type: stored.type, spool: stored.spool, discard: async () => undefined } };
  const uri = file.uri ?? '';
  if (file.payload === undefined && /^https?:\/\//i.test(uri)) {
    const page = await fetchPage(uri, {
      headers: file.extra_headers,
      http: options.http,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_FILE_BYTES,
      timeoutMs: 120_000,
      media: {},
    });
    if (page.kind === 'media') return { media: { type: page.type, spool: page.spool, discard: page.discard } };
    return { bytes: bytesOf(file, page) };
  }
  return { bytes: await readFileSource(blobs, file, options) };
}

export async function readBlob(blobs: BlobStore, key: string, maxBytes: number): Promise<Buffer> {
  return readAll(await openBlob(blobs, key, maxBytes));
}

/** The blob's body; a missing blob is FILE_NOT_FOUND, one above `maxBytes` TOO_LARGE (nothing read). */
async function openBlob(blobs: BlobStore, key: string, maxBytes: number): Promise<Readable> {
  try {
    const got = await blobs.get(key);
    if (got.stat.size > maxBytes) {
      got.body.destroy();
      throw new ExtractionError(`The file is larger than ${maxBytes} bytes`, 'TOO_LARGE');
    }
    return got.body;
  } catch (err) {
    if (err instanceof DomainError && err.code === ErrorCodes.NOT_FOUND)
      throw new ExtractionError(`The stored file ${key} no longer exists`, 'FILE_NOT_FOUND');
    throw err;
  }
}

/** Bytes enough to recognise every audio and video signature. */
const HEAD_BYTES = 4096;

/** A stored recording, read from the blob store straight to disk rather than into memory. */
export interface StoredMedia {
  type: string;
  size: number;
  /** Streams the blob to `path` and resolves to its MD5 (hex); TOO_LARGE above `maxBytes`. */
  spool(path: string, maxBytes: number): Promise<string>;
}

/**
 * The file as a stored recording when it is one: a blob whose first bytes, declared type or name
 * say audio or video. Anything else (and a blob that is missing or empty, which the ordinary
 * read reports) is undefined.
 */
export async function storedMedia(blobs: BlobStore | undefined, file: FileSource): Promise<StoredMedia | undefined> {
  const uri = file.uri ?? '';
  if (!blobs || file.payload !== undefined || !uri.startsWith(BLOB_PREFIX)) return undefined;
  const key = uri.slice(BLOB_PREFIX.length);
  let got: BlobGetResult;
  try {
    got = await blobs.get(key, { range: { start: 0, end: HEAD_BYTES - 1 } });
  } catch (err) {
    // Missing or empty (no byte to range over): the ordinary read reports it.
    if (err instanceof DomainError && (err.code === ErrorCodes.NOT_FOUND || err.code === ErrorCodes.RANGE_NOT_SATISFIABLE))
      return undefined;
    throw err;
  }
  const head = await readAll(got.body);
  const type = detectMediaType(head, file.content_type, file.filename);
  if (!type) return undefined;
  return { type, size: got.stat.size, spool: (path, maxBytes) => spoolBlob(blobs, key, path, maxBytes) };
}

async function spoolBlob(blobs: BlobStore, key: string, path: string, maxBytes: number): Promise<string> {
  const body = await openBlob(blobs, key, maxBytes);
  const md5 = createHash('md5');
  await pipeline(
    body,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        md5.update(chunk);
        yield chunk;
      }
    },
    createWriteStream(path),
  );
  return md5.digest('hex');
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
