import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { ExtractionError } from './extraction.error';

/** What a ZIP container (DOCX, XLSX, PPTX) may hold before any parser opens it. */
export interface ZipLimits {
  /** Entries in the central directory. */
  maxEntries: number;
  /** Sum of every entry's uncompressed size, declared and actual. */
  maxUncompressedBytes: number;
  /** Uncompressed size ÷ compressed size of one entry, checked for entries above `ratioFloorBytes`. */
  maxRatio: number;
  /** Entries smaller than this expand as much as they like: a tiny part cannot hurt, and headers compress well. */
  ratioFloorBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 512 * 1024 * 1024,
  maxRatio: 200,
  ratioFloorBytes: 1024 * 1024,
};

const bomb = (what: string): ExtractionError =>
  new ExtractionError(`The document was refused as a decompression bomb: ${what}`, 'TOO_LARGE');

/**
 * Measures a ZIP container before a parser opens it. The parsers (jszip in mammoth, exceljs,
 * officeparser) inflate whole parts into memory, so a 1 MB file whose part expands to gigabytes
 * would exhaust the process. The central directory is checked first (entry count, declared sizes,
 * per-entry ratio); then, because declared sizes can lie, every entry is inflated as a stream and
 * stopped as soon as it produces more bytes than it declared — so nothing here ever holds more
 * than one chunk, and the total inflated is bounded by the declared total.
 * Throws ExtractionError TOO_LARGE for a bomb, CORRUPT_FILE for a ZIP that cannot be read.
 */
export async function checkZipContainer(data: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<void> {
  const zip = await open(data);
  try {
    if (zip.entryCount > limits.maxEntries) throw bomb(`it holds ${zip.entryCount} parts (at most ${limits.maxEntries} allowed)`);
    const entries = await readEntries(zip, limits);
    for (const entry of entries) {
      if (entry.uncompressedSize === 0 || entry.compressionMethod === 0) continue;
      await inflateWithin(zip, entry);
    }
  } finally {
    zip.close();
  }
}

function open(data: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true }, (err, zip) => {
      if (err || !zip)
        reject(new ExtractionError(`The document is not a readable ZIP container: ${err?.message ?? 'no directory'}`, 'CORRUPT_FILE'));
      else resolve(zip);
    });
  });
}

/** The central directory, refused as soon as its declared sizes break a limit. */
function readEntries(zip: yauzl.ZipFile, limits: ZipLimits): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    let total = 0;
    const fail = (err: Error): void => {
      zip.removeAllListeners();
      reject(
        err instanceof ExtractionError
          ? err
          : new ExtractionError(`The document's ZIP directory is damaged: ${err.message}`, 'CORRUPT_FILE'),
      );
    };
    zip.on('entry', (entry: yauzl.Entry) => {
      total += entry.uncompressedSize;
      if (total > limits.maxUncompressedBytes) return fail(bomb(`its parts expand to more than ${limits.maxUncompressedBytes} bytes`));
      const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
      if (entry.uncompressedSize > limits.ratioFloorBytes && ratio > limits.maxRatio) {
        return fail(bomb(`part ${entry.fileName} expands ${Math.round(ratio)} times (at most ${limits.maxRatio} allowed)`));
      }
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', fail);
    zip.readEntry();
  });
}

/** Inflates one entry to nowhere; yauzl errors as soon as it yields more than its declared size. */
function inflateWithin(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<void> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream?: Readable) => {
      if (err || !stream) {
        reject(new ExtractionError(`Part ${entry.fileName} of the document cannot be read: ${err?.message ?? 'no data'}`, 'CORRUPT_FILE'));
        return;
      }
      stream.on('error', (e: Error) => {
        stream.destroy();
        reject(
          /too many bytes/.test(e.message)
            ? bomb(`part ${entry.fileName} expands beyond the ${entry.uncompressedSize} bytes it declares`)
            : new ExtractionError(`Part ${entry.fileName} of the document cannot be read: ${e.message}`, 'CORRUPT_FILE'),
        );
      });
      stream.on('end', () => resolve());
      stream.resume();
    });
  });
}
