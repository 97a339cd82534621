import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { blobNotFound, isNodeError } from './blob-errors';
import { validatePresignOptions, validatePutOptions, resolveRange } from './blob-input';
import { assertValidBlobKey, assertValidBlobPrefix, isValidBlobKey } from './blob-key';
import { BlobMeter } from './blob-meter';
import { toReadable } from './blob-body';
import { countObjectFiles, listObjectFiles } from './fs-blob-listing';
import type { BlobBody, BlobGetResult, BlobListItem, BlobStat, BlobStore, GetOptions, PresignGetOptions, PutOptions } from './blob-store';
import { encodeTrailer, OBJECT_FILE_SUFFIX, readTrailer, type FsBlobDescription, type FsBlobTrailer } from './fs-blob-file';
import { buildPresignedBlobUrl, verifyPresignedBlobUrl, type PresignedUrlQuery, type PresignedUrlVerdict } from './presigned-url';

export interface FsBlobStoreConfig {
  driver: 'fs';
  /** Directory holding `objects/` and `tmp/`; created if missing. */
  root: string;
  /** HMAC key for presigned URLs; the gateway verifies with the same secret. */
  signingSecret: string;
  /** Origin (and optional path) the gateway is reachable at, e.g. https://zone.example.com */
  publicBaseUrl: string;
}

/** Temp files older than this belong to a crashed process; younger ones may be live uploads. */
const STALE_TEMP_MS = 24 * 3600 * 1000;
const NOT_THERE = ['ENOENT', 'ENOTDIR'];

/**
 * Objects as files under `<root>/objects/<key>#blob`. Writes go to `<root>/tmp` (same file
 * system) and are renamed into place, so readers never see a partial object.
 */
export class FsBlobStore implements BlobStore {
  readonly driver = 'fs' as const;
  private readonly objectsDir: string;
  private readonly tmpDir: string;
  private ready?: Promise<void>;

  constructor(private readonly config: FsBlobStoreConfig) {
    const root = path.resolve(config.root);
    this.objectsDir = path.join(root, 'objects');
    this.tmpDir = path.join(root, 'tmp');
  }

  /** Creates the directories and removes temp files left by a crash. Called lazily by every operation. */
  init(): Promise<void> {
    this.ready ??= this.prepare().catch((err: unknown) => {
      this.ready = undefined; // let a later call retry, e.g. once a volume is mounted
      throw err;
    });
    return this.ready;
  }

  async put(key: string, body: BlobBody, options?: PutOptions): Promise<BlobStat> {
    assertValidBlobKey(key);
    const opts = validatePutOptions(options);
    const source = toReadable(body);
    await this.init();
    const tmp = this.tempPath('part');
    const meter = new BlobMeter({ maxBytes: opts.maxBytes, expectedSize: opts.size });
    let trailer: FsBlobTrailer | undefined;
    const appendTrailer = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => callback(null, chunk),
      // Runs after the meter's flush, so size and md5 are final.
      flush: (callback) => {
        trailer = { v: 1, size: meter.bytes, md5: meter.md5, contentType: opts.contentType, metadata: opts.metadata };
        callback(null, encodeTrailer(trailer));
      },
    });
    try {
      // Opened here, not lazily by the stream: a stream destroyed mid-open would create the file
      // after our cleanup ran. `flush: true` fsyncs before close, so the rename below never
      // publishes bytes that only live in the page cache.
      const handle = await fsp.open(tmp, 'wx', 0o640);
      await pipeline(source, meter, appendTrailer, handle.createWriteStream({ flush: true }));
      const info = await fsp.stat(tmp);
      await this.publish(tmp, this.objectPath(key));
      return this.toStat(key, { trailer: trailer as FsBlobTrailer, lastModified: new Date(info.mtimeMs) });
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<BlobGetResult> {
    assertValidBlobKey(key);
    await this.init();
    const handle = await this.openObject(key);
    if (!handle) throw blobNotFound(key);
    let stat: BlobStat;
    let range: { start: number; end: number } | undefined;
    try {
      // Reading through the handle we described keeps body and stat consistent even if the key is replaced meanwhile.
      stat = this.toStat(key, await readTrailer(handle, key));
      range = options.range ? resolveRange(options.range, stat.size) : undefined;
    } catch (err) {
      await handle.close();
      throw err;
    }
    if (stat.size === 0) {
      await handle.close();
      return { stat, body: Readable.from([]) };
    }
    const body = handle.createReadStream({ start: range?.start ?? 0, end: range?.end ?? stat.size - 1, autoClose: true });
    return range ? { stat, body, range } : { stat, body };
  }

  async stat(key: string): Promise<BlobStat | null> {
    assertValidBlobKey(key);
    await this.init();
    const handle = await this.openObject(key);
    if (!handle) return null;
    try {
      return this.toStat(key, await readTrailer(handle, key));
    } finally {
      await handle.close();
    }
  }

  async exists(key: string): Promise<boolean> {
    assertValidBlobKey(key);
    await this.init();
    try {
      await fsp.access(this.objectPath(key));
      return true;
    } catch (err) {
      if (isNodeError(err, ...NOT_THERE)) return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await this.init();
    const file = this.objectPath(key);
    try {
      await fsp.unlink(file);
    } catch (err) {
      if (isNodeError(err, ...NOT_THERE)) return;
      throw err;
    }
    await this.pruneEmptyDirs(path.dirname(file));
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertValidBlobPrefix(prefix, { allowEmpty: false, requireTrailingSlash: true });
    await this.init();
    const dir = path.join(this.objectsDir, ...prefix.slice(0, -1).split('/'));
    // One rename takes the whole subtree out of sight at once; counting and removal happen out of the way.
    const trash = this.tempPath('trash');
    try {
      await fsp.rename(dir, trash);
    } catch (err) {
      if (isNodeError(err, ...NOT_THERE)) return 0;
      throw err;
    }
    const count = await countObjectFiles(trash);
    await fsp.rm(trash, { recursive: true, force: true });
    await this.pruneEmptyDirs(path.dirname(dir));
    return count;
  }

  async *list(prefix: string): AsyncIterable<BlobListItem> {
    assertValidBlobPrefix(prefix, { allowEmpty: true, requireTrailingSlash: false });
    await this.init();
    const cut = prefix.lastIndexOf('/');
    const dirKey = cut >= 0 ? prefix.slice(0, cut + 1) : '';
    const dir = dirKey ? path.join(this.objectsDir, ...dirKey.slice(0, -1).split('/')) : this.objectsDir;
    yield* listObjectFiles(dir, dirKey, prefix);
  }

  async copy(from: string, to: string): Promise<void> {
    assertValidBlobKey(from, 'from');
    assertValidBlobKey(to, 'to');
    await this.init();
    const tmp = this.tempPath('copy');
    try {
      await fsp.copyFile(this.objectPath(from), tmp, fsConstants.COPYFILE_FICLONE);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      if (isNodeError(err, ...NOT_THERE)) throw blobNotFound(from);
      throw err;
    }
    try {
      await this.publish(tmp, this.objectPath(to));
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  verifyPresignedGet(key: string, query: PresignedUrlQuery): PresignedUrlVerdict {
    if (!isValidBlobKey(key)) return { valid: false, reason: 'malformed' };
    return verifyPresignedBlobUrl(this.config.signingSecret, key, query);
  }

  async presignGet(key: string, options: PresignGetOptions): Promise<string> {
    assertValidBlobKey(key);
    validatePresignOptions(options);
    const expires = Math.floor(Date.now() / 1000) + options.expiresInSeconds;
    return buildPresignedBlobUrl(this.config.publicBaseUrl, this.config.signingSecret, {
      key,
      expires,
      filename: options.filename,
      inline: options.inline,
    });
  }

  async isHealthy(): Promise<boolean> {
    try {
      await this.init();
      await fsp.access(this.objectsDir, fsConstants.R_OK | fsConstants.W_OK);
      await fsp.access(this.tmpDir, fsConstants.R_OK | fsConstants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // Nothing is held open between calls: every handle belongs to one operation or one body stream.
  }

  private async prepare(): Promise<void> {
    await fsp.mkdir(this.objectsDir, { recursive: true });
    await fsp.mkdir(this.tmpDir, { recursive: true });
    const cutoff = Date.now() - STALE_TEMP_MS;
    for (const name of await fsp.readdir(this.tmpDir)) {
      const full = path.join(this.tmpDir, name);
      const info = await fsp.lstat(full).catch(() => null);
      if (info && info.mtimeMs < cutoff) await fsp.rm(full, { recursive: true, force: true });
    }
  }

  private objectPath(key: string): string {
    const segments = key.split('/');
    segments[segments.length - 1] += OBJECT_FILE_SUFFIX;
    const file = path.join(this.objectsDir, ...segments);
    // Key validation already forbids escaping; this is the belt to that pair of braces.
    if (!file.startsWith(this.objectsDir + path.sep)) throw new Error(`blob path escapes the store root: ${key}`);
    return file;
  }

  private tempPath(kind: string): string {
    return path.join(this.tmpDir, `${randomUUID()}.${kind}`);
  }

  private async openObject(key: string): Promise<fsp.FileHandle | null> {
    try {
      return await fsp.open(this.objectPath(key), 'r');
    } catch (err) {
      if (isNodeError(err, ...NOT_THERE)) return null;
      throw err;
    }
  }

  /**
   * Renames into place, recreating the parent if a concurrent delete pruned it in between — while
   * the parent is created too: a recursive mkdir fails with ENOENT when a prune removes a directory
   * it has just made (seen as a 500 on a staged import while another import's file was deleted).
   */
  private async publish(tmp: string, dest: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await fsp.mkdir(path.dirname(dest), { recursive: true });
        await fsp.rename(tmp, dest);
        return;
      } catch (err) {
        if (attempt >= 5 || !isNodeError(err, 'ENOENT')) throw err;
      }
    }
  }

  private async pruneEmptyDirs(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.objectsDir + path.sep); current = path.dirname(current)) {
      try {
        await fsp.rmdir(current);
      } catch (err) {
        if (isNodeError(err, 'ENOENT')) continue;
        return; // not empty (or busy): a parent cannot be empty either
      }
    }
  }

  private toStat(key: string, { trailer, lastModified }: FsBlobDescription): BlobStat {
    return {
      key,
      size: trailer.size,
      contentType: trailer.contentType,
      etag: trailer.md5,
      md5: trailer.md5,
      lastModified,
      metadata: { ...trailer.metadata },
    };
  }
}
