import { createHash } from 'node:crypto';
import type { Client } from 'minio';
import { payloadTooLarge } from './blob-errors';

/** S3 refuses more parts than this in one multipart upload. */
const MAX_PARTS = 10_000;

export interface S3UploadTarget {
  client: Client;
  bucket: string;
  key: string;
  /** Bytes held in memory at most (twice that, briefly, while a part is assembled). */
  partSize: number;
  /** Content-Type and x-amz-meta-* headers. */
  headers: Record<string, string>;
}

/**
 * Uploads a byte stream holding at most one part in memory. Small objects (≤ partSize) go in one
 * PUT once fully read; larger ones as a multipart upload that is aborted on any failure, so a
 * failed or cut-off upload never becomes an object.
 *
 * minio's own `putObject(stream)` is not used for streams: without a known size it always
 * chooses multipart with parts sized for 5 TiB objects (hundreds of MiB in memory), first lists
 * pending uploads (which s3rver does not implement), and leaves errors of the source stream
 * unhandled.
 */
export async function uploadStreamToS3(target: S3UploadTarget, source: AsyncIterable<Buffer>): Promise<{ etag: string }> {
  const iterator = source[Symbol.asyncIterator]();
  const buffer = new PartBuffer();
  try {
    let ended = false;
    while (!ended && buffer.length <= target.partSize) {
      const next = await iterator.next();
      if (next.done) ended = true;
      else buffer.push(next.value);
    }
    if (ended) {
      const whole = buffer.take(buffer.length);
      const { client, bucket, key, headers } = target;
      const result = await onceMoreOnReset(() => client.putObject(bucket, key, whole, whole.length, headers));
      return { etag: result.etag };
    }
    return await uploadMultipart(target, iterator, buffer);
  } finally {
    // Stops the source when we bail out early (a failed part): nothing else would.
    await iterator.return?.();
  }
}

async function uploadMultipart(target: S3UploadTarget, iterator: AsyncIterator<Buffer>, buffer: PartBuffer): Promise<{ etag: string }> {
  const { client, bucket, key, partSize } = target;
  const uploadId = await onceMoreOnReset(() => client.initiateNewMultipartUpload(bucket, key, target.headers));
  const etags: { part: number; etag: string }[] = [];
  const send = async (part: Buffer): Promise<void> => {
    const partNumber = etags.length + 1;
    if (partNumber > MAX_PARTS) throw payloadTooLarge(partSize * MAX_PARTS);
    const headers = { 'Content-MD5': createHash('md5').update(part).digest('base64') };
    const uploaded = await onceMoreOnReset(() =>
      client.uploadPart({ bucketName: bucket, objectName: key, uploadID: uploadId, partNumber, headers }, part),
    );
    etags.push({ part: partNumber, etag: uploaded.etag });
  };
  try {
    for (;;) {
      while (buffer.length >= partSize) await send(buffer.take(partSize));
      const next = await iterator.next();
      if (next.done) break;
      buffer.push(next.value);
    }
    if (buffer.length > 0 || etags.length === 0) await send(buffer.take(buffer.length));
    return await onceMoreOnReset(() => client.completeMultipartUpload(bucket, key, uploadId, etags));
  } catch (err) {
    // Best effort: a server without abort (s3rver) keeps the parts, but they never form an object.
    await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
    throw err;
  }
}

/** Errors of a connection that broke before an answer came: the request can be sent again. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Sends a request again, once, if its connection was reset. A kept-alive connection that the
 * server closed while it sat idle fails like this on reuse (seen with s3rver under load), and
 * every request sent here is safe to repeat: its body is a buffer in hand, a part upload replaces
 * the same part, and a repeated initiation only leaves an unused upload id.
 */
async function onceMoreOnReset<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!RESET_CODES.has((err as { code?: string }).code ?? '')) throw err;
    return send();
  }
}

/** Chunks as they arrived; copied once into a part-sized Buffer when a part is taken. */
class PartBuffer {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  take(bytes: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= bytes) {
      // Common for Buffer bodies: slice without copying.
      this.chunks[0] = first.subarray(bytes);
      if (this.chunks[0].length === 0) this.chunks.shift();
      this.length -= bytes;
      return first.subarray(0, bytes);
    }
    const out = Buffer.allocUnsafe(bytes);
    let filled = 0;
    while (filled < bytes) {
      const chunk = this.chunks[0] as Buffer;
      const n = Math.min(chunk.length, bytes - filled);
      chunk.copy(out, filled, 0, n);
      filled += n;
      if (n === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(n);
    }
    this.length -= bytes;
    return out;
  }
}
