import {
  DomainError,
  ErrorCodes,
  extractedBlobKey,
  type ExtractedFieldData,
  type FieldProcessedResult,
  type ProcessFieldErrorDto,
} from '@kb/contracts';
import type { BlobStore } from '@kb/platform/storage';

/** What a processing result amounts to once its blob is read. */
export type LoadedResult =
  /** `bytes`: the size of the result's blob as the store reports it. */
  | { extracted: ExtractedFieldData; language?: string; bytes: number }
  | { error: ProcessFieldErrorDto }
  /** The blob is gone: the resource (and its blob prefix) was deleted meanwhile. */
  | { gone: true };

/** A result blob is well under this; anything bigger is refused rather than parsed. */
const MAX_RESULT_BYTES = 512 * 1024 * 1024;

const invalid = (body: string): LoadedResult => ({ error: { body, code: 500, code_str: 'INVALID_PROCESSING_RESULT' } });

/**
 * Reads and checks the extracted data a worker wrote. The key must be the one this field's write
 * owns (a message cannot point content at another blob), and the JSON must have the spec's shape.
 */
export async function loadExtractedBlob(blobs: BlobStore, result: FieldProcessedResult): Promise<LoadedResult> {
  const expected = extractedBlobKey(result);
  if (result.extracted_key !== expected)
    return invalid(`The processing result names ${String(result.extracted_key)}, expected ${expected}`);
  let raw: Buffer;
  let bytes: number;
  try {
    const got = await blobs.get(expected);
    bytes = got.stat.size;
    if (got.stat.size > MAX_RESULT_BYTES) {
      got.body.destroy();
      return invalid(`The processing result is larger than ${MAX_RESULT_BYTES} bytes`);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of got.body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    raw = Buffer.concat(chunks);
  } catch (err) {
    if (err instanceof DomainError && err.code === ErrorCodes.NOT_FOUND) return { gone: true };
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(raw.toString('utf8'));
  } catch {
    return invalid('The processing result is not JSON');
  }
  if (!isExtracted(data)) return invalid('The processing result lacks text or metadata');
  const language = data.metadata.metadata['language'];
  return { extracted: data, bytes, ...(typeof language === 'string' && language ? { language } : {}) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isExtracted(v: unknown): v is ExtractedFieldData {
  if (!isObject(v) || !isObject(v['text']) || !isObject(v['metadata'])) return false;
  return typeof v['text']['text'] === 'string' && isObject(v['metadata']['metadata']);
}

/**
 * The field's `extracted` member (spec 2.3): the worker's record with the members the reader
 * selects by `extracted=` (text, metadata, vectors, file, link); `last_index` is when it landed.
 * Vectors live in the same jsonb and are only served when asked for.
 */
export function extractedOf(data: ExtractedFieldData, now: string): Record<string, unknown> {
  return {
    text: data.text,
    metadata: { ...data.metadata, metadata: { ...data.metadata.metadata, last_index: now } },
    ...(data.vectors ? { vectors: data.vectors } : {}),
    ...(data.vectorsets && Object.keys(data.vectorsets).length > 0 ? { vectorsets: data.vectorsets } : {}),
    ...(data.file ? { file: data.file } : {}),
    ...(data.link ? { link: data.link } : {}),
  };
}
