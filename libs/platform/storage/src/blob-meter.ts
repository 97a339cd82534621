import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { payloadTooLarge, sizeMismatch } from './blob-errors';

/**
 * Counts and hashes bytes as they pass, and fails the stream as soon as a limit is crossed, so a
 * too-large upload stops at the limit instead of after it has been read whole.
 */
export class BlobMeter extends Transform {
  private readonly hash = createHash('md5');
  private digest?: string;
  bytes = 0;

  constructor(private readonly limits: { maxBytes?: number; expectedSize?: number }) {
    super();
  }

  get md5(): string {
    if (this.digest === undefined) throw new Error('BlobMeter: md5 read before the stream ended');
    return this.digest;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    const { maxBytes, expectedSize } = this.limits;
    if (maxBytes !== undefined && this.bytes > maxBytes) return callback(payloadTooLarge(maxBytes));
    if (expectedSize !== undefined && this.bytes > expectedSize) return callback(sizeMismatch(expectedSize, 'stream is longer'));
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { expectedSize } = this.limits;
    if (expectedSize !== undefined && this.bytes !== expectedSize)
      return callback(sizeMismatch(expectedSize, `stream has ${this.bytes} bytes`));
    this.digest = this.hash.digest('hex');
    callback();
  }
}
