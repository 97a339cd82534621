import type { ExtractedFieldData } from '@kb/contracts';

// Where the extracted record names stored files (thumbnails, previews, generated files); the
// text, vectors and paragraph metadata are large and never name one, so they are not walked.
const WALKED = ['file', 'link', 'metadata'] as const;
const SKIPPED = new Set([
  'text',
  'vectors',
  'paragraphs',
  'split_metadata',
  'positions',
  'ner',
  'entities',
  'relations',
  'question_answers',
]);
const MAX_DEPTH = 6;
const MAX_ARTEFACTS = 64;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The blobs a field's extracted record names under the field's own prefix, with the size each
 * reference carries (the store's size when the worker wrote it): by key, so a file named twice
 * (a thumbnail in the file's data and in the metadata) is one.
 */
export function storedArtefacts(extracted: ExtractedFieldData, fieldPrefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (node: unknown, depth: number): void => {
    if (!isObject(node) || depth > MAX_DEPTH || Object.keys(out).length >= MAX_ARTEFACTS) return;
    const { uri, size } = node;
    if (typeof uri === 'string' && uri.startsWith(`blob:${fieldPrefix}`)) {
      if (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0) out[uri.slice('blob:'.length)] = size;
      return;
    }
    for (const [k, v] of Object.entries(node)) if (!SKIPPED.has(k)) walk(v, depth + 1);
  };
  for (const group of WALKED) walk(extracted[group], 0);
  return out;
}
