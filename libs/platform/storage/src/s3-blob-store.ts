import * as http from 'node:http';
import type { PresignedUrlVerdict } from './presigned-url';
import * as https from 'node:https';
import { pipeline } from 'node:stream';
import { Client, CopyDestinationOptions, CopySourceOptions, type BucketItemStat } from 'minio';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { blobNotFound } from './blob-errors';
import { decodeMetadataValue, encodeMetadataValue, resolveRange, validatePresignOptions, validatePutOptions } from './blob-input';
import { assertValidBlobKey, assertValidBlobPrefix } from './blob-key';
import { BlobMeter } from './blob-meter';
import { toReadable } from './blob-body';
import {
  BLOB_DEFAULT_CONTENT_TYPE,
  type BlobBody,
  type BlobGetResult,
  type BlobListItem,
  type BlobStat,
  type BlobStore,
  type GetOptions,
  type PresignGetOptions,
  type PutOptions,
} from './blob-store';
import { contentDisposition } from './presigned-url';
import { uploadStreamToS3 } from './s3-upload';

export interface S3BlobStoreConfig {
  driver: 's3';
  endPoint: string;
  port: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** Defaults to us-east-1; set it to skip minio's bucket-location lookup against other regions. */
  region?: string;
  /** Multipart part size in bytes (≥ 5 MiB): also the most an upload holds in memory. */
  partSize?: number;
}

export const DEFAULT_S3_PART_SIZE = 16 * 1024 * 1024;
export const MIN_S3_PART_SIZE = 5 * 1024 * 1024;
/** S3 DeleteObjects accepts at most this many keys per request. */
const DELETE_BATCH = 1000;
const META_PREFIX = 'x-amz-meta-';
const MISSING = new Set(['NotFound', 'NoSuchKey']);

export class S3BlobStore implements BlobStore {
  readonly driver = 's3' as const;
  readonly bucket: string;
  private readonly client: Client;
  private readonly agent: http.Agent;
  private readonly partSize: number;

  constructor(config: S3BlobStoreConfig) {
    this.partSize = config.partSize ?? DEFAULT_S3_PART_SIZE;
    if (!Number.isInteger(this.partSize) || this.partSize < MIN_S3_PART_SIZE)
      throw new Error(`S3 partSize must be an integer ≥ ${MIN_S3_PART_SIZE}`);
    this.bucket = config.bucket;
    // Our own keep-alive agent, so close() can release its sockets and let the process exit.
    this.agent = config.useSSL ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.client = new Client({
      endPoint: config.endPoint,
      port: config.port,
      useSSL: config.useSSL,
      accessKey: config.accessKey,
      secretKey: config.secretKey,
      region: config.region ?? 'us-east-1',
      partSize: this.partSize,
      transportAgent: this.agent,
    });
  }

  /** Creates the bucket when it does not exist yet (racing creators are fine). */
  async ensureBucket(): Promise<void> {
    if (await this.client.bucketExists(this.bucket)) return;
    try {
      await this.client.makeBucket(this.bucket, this.client.region ?? 'us-east-1');
    } catch (err) {
      if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(s3Code(err) ?? '')) throw err;
    }
  }

  async put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobStat> {
    assertValidBlobKey(key);
    const opts = validatePutOptions(options);
    const meter = new BlobMeter({ maxBytes: opts.maxBytes, expectedSize: opts.size });
    const metered = pipeline(toReadable(body), meter, () => undefined); // errors surface through `meter`
    const headers: Record<string, string> = { 'Content-Type': opts.contentType };
    for (const [name, value] of Object.entries(opts.metadata)) headers[META_PREFIX + name] = encodeMetadataValue(value);
    const { etag } = await uploadStreamToS3({ client: this.client, bucket: this.bucket, key, partSize: this.partSize, headers }, metered);
    return {
      key,
      size: meter.bytes,
      contentType: opts.contentType,
      etag,
      md5: meter.md5,
      lastModified: new Date(),
      metadata: opts.metadata,
    };
  }

  async get(key: string, options: GetOptions = {}): Promise<BlobGetResult> {
    // HEAD first: both drivers then answer a bad range the same way, whatever the server does.
    // If the object is replaced between HEAD and GET the body is the newer one; keys here are
    // written once per version, so that window is accepted rather than paid for with retries.
    const stat = await this.stat(key);
    if (!stat) throw blobNotFound(key);
    const range = options.range ? resolveRange(options.range, stat.size) : undefined;
    try {
      const body = range
        ? await this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1)
        : await this.client.getObject(this.bucket, key);
      return range ? { stat, body, range } : { stat, body };
    } catch (err) {
      throw MISSING.has(s3Code(err) ?? '') ? blobNotFound(key) : err;
    }
  }

  async stat(key: string): Promise<BlobStat | null> {
    assertValidBlobKey(key);
    try {
      return toStat(key, await this.client.statObject(this.bucket, key));
    } catch (err) {
      if (MISSING.has(s3Code(err) ?? '')) return null;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.client.removeObject(this.bucket, key); // S3 answers 204 for missing keys too
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertValidBlobPrefix(prefix, { allowEmpty: false, requireTrailingSlash: true });
    let deleted = 0;
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      const results = await this.client.removeObjects(this.bucket, batch);
      const failed = results.filter((r) => r && r.Error);
      if (failed.length > 0) {
        throw new DomainError(ErrorCodes.INTERNAL, `failed to delete ${failed.length} objects under ${prefix}`, {
          errors: failed.slice(0, 10).map((f) => f?.Error),
        });
      }
      deleted += batch.length;
      batch = [];
    };
    for await (const item of this.list(prefix)) {
      batch.push(item.key);
      if (batch.length >= DELETE_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    return deleted;
  }

  async *list(prefix: string): AsyncIterable<BlobListItem> {
    assertValidBlobPrefix(prefix, { allowEmpty: true, requireTrailingSlash: false });
    for await (const item of this.client.listObjectsV2(this.bucket, prefix, true)) {
      if (item.name === undefined) continue; // common prefixes only appear in delimited listings
      yield { key: item.name, size: item.size, etag: item.etag, lastModified: item.lastModified };
    }
  }

  async copy(from: string, to: string): Promise<void> {
    assertValidBlobKey(from, 'from');
    assertValidBlobKey(to, 'to');
    try {
      await this.client.copyObject(
        new CopySourceOptions({ Bucket: this.bucket, Object: from }),
        new CopyDestinationOptions({ Bucket: this.bucket, Object: to }),
      );
    } catch (err) {
      throw MISSING.has(s3Code(err) ?? '') ? blobNotFound(from) : err;
    }
  }

  /** S3 serves its own presigned links: none is ours to serve. */
  verifyPresignedGet(): PresignedUrlVerdict {
    return { valid: false, reason: 'malformed' };
  }

  async presignGet(key: string, options: PresignGetOptions): Promise<string> {
    assertValidBlobKey(key);
    validatePresignOptions(options);
    const disposition = contentDisposition(options.filename, options.inline);
    const respHeaders: Record<string, string> = disposition ? { 'response-content-disposition': disposition } : {};
    return this.client.presignedGetObject(this.bucket, key, options.expiresInSeconds, respHeaders);
  }

  async isHealthy(): Promise<boolean> {
    try {
      return await this.client.bucketExists(this.bucket);
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

function toStat(key: string, info: BucketItemStat): BlobStat {
  const metadata: Record<string, string> = {};
  let contentType = BLOB_DEFAULT_CONTENT_TYPE;
  // minio strips "x-amz-meta-" but mixes in standard headers; ours never use those names.
  for (const [name, value] of Object.entries(info.metaData as Record<string, unknown>)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') contentType = String(value);
    else if (!isStandardHeader(lower) && typeof value === 'string') metadata[lower] = decodeMetadataValue(value);
  }
  // A plain-MD5 ETag only comes from single-part, non-KMS uploads; multipart ETags end in "-N".
  const md5 = /^[0-9a-f]{32}$/.test(info.etag) ? info.etag : undefined;
  return { key, size: info.size, contentType, etag: info.etag, md5, lastModified: info.lastModified, metadata };
}

function isStandardHeader(name: string): boolean {
  return (
    name.startsWith('x-amz-') ||
    ['cache-control', 'content-encoding', 'content-disposition', 'content-language', 'if-none-match', 'if-match'].includes(name)
  );
}

function s3Code(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
