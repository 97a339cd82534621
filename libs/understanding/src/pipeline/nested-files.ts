import { ExtractionError, type ExtractedDocument, type NestedFile } from './extractors';

export interface MergedDocument {
  document: ExtractedDocument;
  /** Attachment name → where its text sits in the merged text (spec `file.nested_position`). */
  nestedPositions: Record<string, { start: number; end: number; page: number }>;
}

/**
 * Appends the text of the files an e-mail carries after its body, each as its own paragraphs, so
 * an attachment is searchable as part of the message. One level deep: an attachment's own
 * attachments are not opened. An attachment that cannot be read (unsupported, encrypted) adds
 * nothing; a transient failure propagates so the job is retried.
 *
 * `budgetMs` bounds the time spent on all attachments together: each parse has its own wall time in
 * the sandbox, but a message of hundreds of slow attachments would otherwise hold a parsing worker
 * for hours. Attachments not reached within it are left out.
 */
export async function appendNested(
  doc: ExtractedDocument,
  extract: (file: NestedFile) => Promise<ExtractedDocument>,
  budget: { budgetMs: number; now?: () => number } = { budgetMs: Infinity },
): Promise<MergedDocument> {
  let text = doc.text;
  const paragraphs = [...doc.paragraphs];
  const nestedPositions: MergedDocument['nestedPositions'] = {};
  const now = budget.now ?? Date.now;
  const deadline = now() + budget.budgetMs;
  for (const [i, file] of (doc.nested ?? []).entries()) {
    if (now() > deadline) break;
    let nested: ExtractedDocument;
    try {
      nested = await extract(file);
    } catch (err) {
      if (err instanceof ExtractionError && err.code !== 'FETCH_FAILED') continue;
      throw err;
    }
    if (!nested.text.trim()) continue;
    const offset = text ? text.length + 2 : 0;
    text = text ? `${text}\n\n${nested.text}` : nested.text;
    for (const p of nested.paragraphs) paragraphs.push({ ...p, start: p.start + offset, end: p.end + offset });
    nestedPositions[file.filename || `attachment-${i + 1}`] = { start: offset, end: text.length, page: 0 };
  }
  return { document: { ...doc, text, paragraphs }, nestedPositions };
}
