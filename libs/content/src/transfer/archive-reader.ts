import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { ArchiveError, parseEntryName, type ArchiveLimits, type EntryName } from './archive-format';

export interface ArchiveEntry {
  name: EntryName;
  /** The name as stored, for messages. */
  path: string;
  size: number;
  /** The entry's bytes: read them (or leave them) before asking for the next entry. */
  body: AsyncIterable<Buffer>;
}

/** Tar headers, padding and pax records on top of the entries' own bytes, per entry. */
const OVERHEAD_PER_ENTRY = 4096;

/**
 * Reads a gzipped tar entry by entry, refusing what the format does not allow before reading it:
 * names outside the layout (traversal, absolute paths), links and devices, entries larger than the
 * limits say, more entries or more decompressed bytes than allowed (archive bombs), a first entry
 * that is not the manifest, anything after `end.json`. The archive is streamed: at most one chunk
 * of it is held here.
 */
export async function* readArchive(source: Readable, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  const extract = tarExtract();
  const gunzip = createGunzip();
  const cap = limits.maxTotalBytes + limits.maxEntries * OVERHEAD_PER_ENTRY;
  let inflated = 0;
  let failure: Error | undefined;
  const stop = (err: Error) => {
    failure ??= err;
    extract.destroy(failure);
    source.destroy();
    gunzip.destroy();
  };
  source.on('error', (err: Error) => stop(err));
  gunzip.on('error', (err: Error) => stop(new ArchiveError(`not a gzip stream (${err.message})`)));
  gunzip.on('data', (chunk: Buffer) => {
    inflated += chunk.length;
    if (inflated > cap) return stop(new ArchiveError(`the archive holds more than ${limits.maxTotalBytes} bytes once decompressed`));
    if (!extract.write(chunk)) gunzip.pause();
  });
  extract.on('drain', () => gunzip.resume());
  gunzip.on('end', () => extract.end(undefined));
  source.pipe(gunzip);

  let count = 0;
  let ended = false;
  let total = 0;
  try {
    for await (const entry of extract) {
      const header = entry.header;
      const path = header.name;
      count++;
      if (count > limits.maxEntries) throw new ArchiveError(`the archive has more than ${limits.maxEntries} entries`);
      if (ended) throw new ArchiveError(`entry ${JSON.stringify(path)} follows end.json`);
      if (header.type !== 'file' && header.type !== 'contiguous-file')
        throw new ArchiveError(`entry ${JSON.stringify(path)} is a ${String(header.type)}, not a file`);
      const name = parseEntryName(path);
      if (!name) throw new ArchiveError(`entry name ${JSON.stringify(path.slice(0, 300))} is not allowed`);
      if (count === 1 && !(name.kind === 'fixed' && name.name === 'manifest.json'))
        throw new ArchiveError('the archive must begin with manifest.json');
      const size = header.size ?? 0;
      const max = name.kind === 'blob' ? limits.maxBlobBytes : limits.maxJsonEntryBytes;
      if (size > max) throw new ArchiveError(`entry ${path} has ${size} bytes, more than the ${max} allowed`);
      total += size;
      if (total > limits.maxTotalBytes)
        throw new ArchiveError(`the archive holds more than ${limits.maxTotalBytes} bytes once decompressed`);
      if (name.kind === 'fixed' && name.name === 'end.json') ended = true;
      yield { name, path, size, body: entry as AsyncIterable<Buffer> };
    }
  } catch (err) {
    stop(err as Error);
    throw failure instanceof ArchiveError
      ? failure
      : err instanceof ArchiveError
        ? err
        : new ArchiveError(`unreadable archive (${(failure ?? (err as Error)).message})`);
  } finally {
    if (!failure) {
      source.destroy();
      gunzip.destroy();
    }
  }
  if (failure) throw failure instanceof ArchiveError ? failure : new ArchiveError(`unreadable archive (${failure.message})`);
  if (!ended) throw new ArchiveError('the archive ends before end.json (truncated?)');
}

/** The whole of a small entry as text (its size was bounded by the reader). */
export async function entryText(entry: ArchiveEntry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The lines of a JSON Lines entry, one at a time, each at most `maxLine` bytes (a longer one is
 * refused before it is held whole). Empty lines are skipped.
 */
export async function* entryLines(entry: ArchiveEntry, maxLine: number): AsyncGenerator<{ line: string; n: number }> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let n = 0;
  const flush = (tail: Buffer): string => {
    const text = Buffer.concat([...pending, tail]).toString('utf8');
    pending = [];
    pendingBytes = 0;
    return text;
  };
  for await (const chunk of entry.body) {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      if (pendingBytes + (i - start) > maxLine) throw new ArchiveError(`${entry.path} line ${n + 1} is longer than ${maxLine} bytes`);
      const line = flush(chunk.subarray(start, i));
      n++;
      if (line.trim()) yield { line, n };
      start = i + 1;
    }
    const rest = chunk.subarray(start);
    pendingBytes += rest.length;
    if (pendingBytes > maxLine) throw new ArchiveError(`${entry.path} line ${n + 1} is longer than ${maxLine} bytes`);
    if (rest.length) pending.push(rest);
  }
  const last = flush(Buffer.alloc(0));
  if (last.trim()) yield { line: last, n: n + 1 };
}
