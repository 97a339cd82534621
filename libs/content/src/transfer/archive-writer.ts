import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';

/**
 * Writes a gzipped tar one entry at a time: `output` is the compressed stream (give it to the
 * blob store), each `add…` resolves once its entry is in the tar, so a caller that awaits them
 * never holds more than one entry (and the stream's buffers).
 */
export class ArchiveWriter {
  private readonly pack: Pack = tarPack();
  readonly output: Readable;
  private readonly mtime = new Date();

  constructor() {
    const gzip = createGzip();
    this.output = Readable.from(this.pack).pipe(gzip);
  }

  async addJson(name: string, value: unknown): Promise<void> {
    await this.addBuffer(name, Buffer.from(JSON.stringify(value), 'utf8'));
  }

  /** JSON Lines: one value per line, each ending in `\n`. */
  async addLines(name: string, values: readonly unknown[]): Promise<void> {
    await this.addBuffer(name, Buffer.from(values.map((v) => `${JSON.stringify(v)}\n`).join(''), 'utf8'));
  }

  addBuffer(name: string, bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pack.entry({ name, size: bytes.length, mtime: this.mtime, mode: 0o644 }, bytes, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** A stream of exactly `size` bytes (a stored file); the tar header needs the size first. */
  addStream(name: string, size: number, body: Readable): Promise<void> {
    return new Promise((resolve, reject) => {
      const sink = this.pack.entry({ name, size, mtime: this.mtime, mode: 0o644 }, (err) => (err ? reject(err) : resolve()));
      body.on('error', (err) => {
        sink.destroy(err);
        reject(err);
      });
      body.pipe(sink);
    });
  }

  finalize(): void {
    this.pack.finalize();
  }

  /** Stops the archive with an error (the blob store then stores nothing). */
  abort(err: Error): void {
    this.pack.destroy(err);
    this.output.destroy(err);
  }
}
