import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BlobStore } from '../src';

/** What each driver's setup hands to the shared contract. */
export interface BlobStoreHarness {
  store: BlobStore;
  /** Fetches a presigned URL the way its consumer would (HTTP for S3, the gateway's check for fs). */
  openPresigned(url: string): Promise<{ status: number; body: Buffer; contentDisposition?: string | null }>;
  /** Files in the driver's scratch area, for drivers that have one: a failed put must leave none. */
  scratchEntries?(): Promise<string[]>;
  teardown(): Promise<void>;
  /** Gaps of a test server, not of the driver: the assertions they affect are skipped or relaxed. */
  serverQuirks?: {
    /** s3rver treats `bytes=0-0` as the whole object (it reads an end of 0 as "no end"). */
    ignoresZeroRangeEnd?: boolean;
    /** s3rver lists in its on-disk order; S3 and MinIO list in UTF-8 byte order. */
    unorderedListing?: boolean;
  };
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export function md5(data: Buffer | string): string {
  return createHash('md5').update(data).digest('hex');
}

/** A stream of `total` fresh bytes in `chunkSize` chunks; `failAfter` makes it error mid-way. */
export function generatedStream(
  total: number,
  options: { chunkSize?: number; failAfter?: number; onChunk?: (produced: number) => void } = {},
): { stream: Readable; md5: () => string } {
  const chunkSize = options.chunkSize ?? 64 * 1024;
  const hash = createHash('md5');
  async function* produce(): AsyncGenerator<Buffer> {
    let produced = 0;
    for (let i = 0; produced < total; i++) {
      if (options.failAfter !== undefined && produced >= options.failAfter) throw new Error('source failed mid-way');
      const chunk = Buffer.allocUnsafe(Math.min(chunkSize, total - produced));
      chunk.fill(i % 251);
      chunk.writeUInt32BE(i, 0);
      hash.update(chunk);
      produced += chunk.length;
      options.onChunk?.(produced);
      yield chunk;
    }
  }
  return { stream: Readable.from(produce(), { objectMode: false }), md5: () => hash.digest('hex') };
}

/**
 * Full GCs on demand so memory samples show what is retained, not garbage waiting for a
 * collection. Two passes: array buffers are freed by a sweeper after the first.
 */
export function memoryProbe(): { sample(): void; peakGrowth(): number } {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const measure = (): number => {
    gc();
    gc();
    return process.memoryUsage().arrayBuffers;
  };
  const baseline = measure();
  let peak = 0;
  return {
    sample: () => {
      peak = Math.max(peak, measure() - baseline);
    },
    peakGrowth: () => peak,
  };
}
