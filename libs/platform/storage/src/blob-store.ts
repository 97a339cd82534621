import type { PresignedUrlQuery, PresignedUrlVerdict } from './presigned-url';
import type { Readable } from 'node:stream';

export type BlobDriver = 'fs' | 's3';

/** What a store knows about one object. `md5` is hex; `etag` is the driver's opaque version tag. */
export interface BlobStat {
  key: string;
  size: number;
  contentType: string;
  etag?: string;
  /** Absent when the driver cannot know it without reading the object (S3 multipart objects). */
  md5?: string;
  lastModified: Date;
  /** User metadata: lower-case keys, string values, as given to `put`. */
  metadata: Record<string, string>;
}

/**
 * One row of a listing. S3 listings carry no content type or user metadata, and fetching them
 * would cost one request per object, so listings promise only what both drivers know cheaply.
 */
export interface BlobListItem {
  key: string;
  size: number;
  etag?: string;
  lastModified: Date;
}

export interface PutOptions {
  contentType?: string;
  /** Declared length; the upload fails if the stream turns out longer or shorter. */
  size?: number;
  metadata?: Record<string, string>;
  /** Abort with PAYLOAD_TOO_LARGE, storing nothing, once the stream passes this many bytes. */
  maxBytes?: number;
}

/** Byte range as in HTTP `Range: bytes=start-end`: `end` is inclusive and clamped to the last byte. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface GetOptions {
  range?: ByteRange;
}

export interface BlobGetResult {
  stat: BlobStat;
  body: Readable;
  /** The satisfied range (inclusive) when one was asked for. */
  range?: { start: number; end: number };
}

export interface PresignGetOptions {
  expiresInSeconds: number;
  /** Suggested download name (Content-Disposition). */
  filename?: string;
  /** Ask the browser to display rather than download. */
  inline?: boolean;
}

export type BlobBody = Readable | Buffer | string;

/**
 * The only door to binary data. Keys are validated by every driver (see `blob-key.ts`); callers
 * namespace them by service and KB, e.g. `content/kbs/{kbid}/r/{rid}/f/{field}/original`.
 */
export interface BlobStore {
  readonly driver: BlobDriver;
  /** Streams the body in; atomic: readers see the old object or the whole new one, never a part. */
  put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobStat>;
  /** NOT_FOUND when absent; RANGE_NOT_SATISFIABLE for a range outside the object. */
  get(key: string, options?: GetOptions): Promise<BlobGetResult>;
  stat(key: string): Promise<BlobStat | null>;
  exists(key: string): Promise<boolean>;
  /** Idempotent: deleting a missing key succeeds. */
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix` (which must end with `/`); returns the count. */
  deletePrefix(prefix: string): Promise<number>;
  /** Objects whose key starts with `prefix` (plain string prefix, like S3), in key order. */
  list(prefix: string): AsyncIterable<BlobListItem>;
  /** Copies bytes, content type and metadata; NOT_FOUND when the source is absent. */
  copy(from: string, to: string): Promise<void>;
  /** A URL anyone holding it may GET until it expires. Does not check that the object exists. */
  presignGet(key: string, options: PresignGetOptions): Promise<string>;
  /**
   * Whether a link this store signed (`presignGet`) for `key` is valid now: the fs driver's links
   * are served by the gateway, which asks here; S3's are served by S3 (always invalid here).
   */
  verifyPresignedGet(key: string, query: PresignedUrlQuery): PresignedUrlVerdict;
  isHealthy(): Promise<boolean>;
  close(): Promise<void>;
}

export const BLOB_DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** S3's limit for presigned URLs; the fs driver keeps the same so callers behave the same on both. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
