import type { Readable } from 'node:stream';
import { DomainError, ErrorCodes } from '@kb/contracts';
import type { BlobStore } from '@kb/platform/storage';
import { DEFAULT_MAX_FILE_BYTES, ExtractionError, fetchPage } from './extractors';

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
  allowPrivate: boolean;
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
  if (!/^https?:\/\//i.test(uri)) throw new ExtractionError(`The file address ${JSON.stringify(uri)} is neither a blob nor an http(s) URL`, 'FORBIDDEN_ADDRESS');
  const page = await fetchPage(uri, { headers: file.extra_headers, allowPrivate: options.allowPrivate, maxBytes, timeoutMs: 120_000 });
  // A declared content type is the client's word about its own file; the server's comes second.
  const contentType = file.content_type ?? page.contentType.split(';')[0];
  return { data: page.kind === 'html' ? Buffer.from(page.html, 'utf8') : page.data, contentType };
}

export async function readBlob(blobs: BlobStore, key: string, maxBytes: number): Promise<Buffer> {
  let body: Readable;
  try {
    const got = await blobs.get(key);
    if (got.stat.size > maxBytes) {
      got.body.destroy();
      throw new ExtractionError(`The file is larger than ${maxBytes} bytes`, 'TOO_LARGE');
    }
    body = got.body;
  } catch (err) {
    if (err instanceof DomainError && err.code === ErrorCodes.NOT_FOUND) throw new ExtractionError(`The stored file ${key} no longer exists`, 'FILE_NOT_FOUND');
    throw err;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
