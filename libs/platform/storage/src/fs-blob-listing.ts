import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { isNodeError } from './blob-errors';
import type { BlobListItem } from './blob-store';
import { OBJECT_FILE_SUFFIX, readTrailer } from './fs-blob-file';

const NOT_THERE = ['ENOENT', 'ENOTDIR'];

/**
 * Walks `dir` (holding keys that start with `keyPrefix`) and yields objects whose key starts
 * with `filter`, descending only into directories that can hold such keys.
 */
export async function* listObjectFiles(dir: string, keyPrefix: string, filter: string): AsyncIterable<BlobListItem> {
  let entries;
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isNodeError(err, ...NOT_THERE)) return;
    throw err;
  }
  // Sorting directories as "name/" and files by key name yields keys in plain byte order, like S3.
  const named = entries.flatMap((e) => {
    if (e.isDirectory()) return [{ name: e.name, sortKey: `${e.name}/`, isDir: true }];
    if (e.isFile() && e.name.endsWith(OBJECT_FILE_SUFFIX))
      return [{ name: e.name, sortKey: e.name.slice(0, -OBJECT_FILE_SUFFIX.length), isDir: false }];
    return [];
  });
  named.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  for (const entry of named) {
    const key = keyPrefix + entry.sortKey;
    if (entry.isDir) {
      if (key.startsWith(filter) || filter.startsWith(key)) yield* listObjectFiles(path.join(dir, entry.name), key, filter);
    } else if (key.startsWith(filter)) {
      const item = await describe(path.join(dir, entry.name), key);
      if (item) yield item;
    }
  }
}

async function describe(file: string, key: string): Promise<BlobListItem | null> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (err) {
    if (isNodeError(err, ...NOT_THERE)) return null; // deleted while we listed
    throw err;
  }
  try {
    const { trailer, lastModified } = await readTrailer(handle, key);
    return { key, size: trailer.size, etag: trailer.md5, lastModified };
  } finally {
    await handle.close();
  }
}

export async function countObjectFiles(dir: string): Promise<number> {
  let count = 0;
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) count += await countObjectFiles(path.join(dir, entry.name));
    else if (entry.name.endsWith(OBJECT_FILE_SUFFIX)) count++;
  }
  return count;
}
