import type { ExtractedFieldData, ExtractedVector } from '@kb/contracts';
import type { AnalysedText } from './analyse-text';

/** File reference of spec 2.3: {uri, size, content_type, filename, md5}. */
export interface FileReference {
  uri: string;
  size: number;
  content_type: string;
  filename: string;
  md5: string;
}

export interface MetadataExtras {
  mime_type: string;
  /** When processing of this field began; every `last_*` stamp of this pass. */
  started: string;
  links?: string[];
  thumbnail?: FileReference;
}

/** `extracted.metadata.metadata` (or one `split_metadata` entry) of an analysed text. */
export function metadataOf(a: AnalysedText, extras: MetadataExtras): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    links: extras.links ?? [],
    paragraphs: a.paragraphs,
    ner: a.ner.ner,
    entities: a.ner.entities,
    classifications: [],
    last_index: now,
    last_understanding: now,
    last_extract: now,
    last_summary: now,
    last_processing_start: extras.started,
    ...(extras.thumbnail ? { thumbnail: extras.thumbnail } : {}),
    language: a.language ?? '',
    summary: a.summary,
    positions: a.ner.positions,
    relations: a.relations,
    mime_type: extras.mime_type,
  };
}

/** The `extracted` record of a field with one text (text, file and link fields). */
export function singleTextExtracted(a: AnalysedText, vectors: ExtractedVector[], extras: MetadataExtras): ExtractedFieldData {
  return {
    text: { text: a.text, split_text: {}, deleted_splits: [] },
    metadata: { metadata: metadataOf(a, extras), split_metadata: {}, deleted_splits: [] },
    vectors: { vectors: { vectors }, split_vectors: {}, deleted_splits: [] },
  };
}

/**
 * The `extracted` record of a conversation: one split per message ident. The field-level
 * metadata carries what describes the whole conversation (language, mime type), no paragraphs.
 */
export function splitExtracted(
  splits: { ident: string; analysed: AnalysedText; vectors: ExtractedVector[] }[],
  extras: MetadataExtras,
): ExtractedFieldData {
  const languages = splits.map((s) => s.analysed.language).filter((l): l is string => !!l);
  const language = mostCommon(languages);
  const split_text: Record<string, string> = {};
  const split_metadata: Record<string, Record<string, unknown>> = {};
  const split_vectors: Record<string, { vectors: ExtractedVector[] }> = {};
  for (const s of splits) {
    split_text[s.ident] = s.analysed.text;
    split_metadata[s.ident] = metadataOf(s.analysed, extras);
    split_vectors[s.ident] = { vectors: s.vectors };
  }
  const whole: AnalysedText = {
    text: '',
    paragraphs: [],
    ner: { ner: {}, entities: {}, positions: {} },
    relations: [],
    summary: '',
    ...(language ? { language } : {}),
  };
  return {
    text: { text: '', split_text, deleted_splits: [] },
    metadata: { metadata: metadataOf(whole, extras), split_metadata, deleted_splits: [] },
    vectors: { vectors: { vectors: [] }, split_vectors, deleted_splits: [] },
  };
}

function mostCommon(values: string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | undefined;
  for (const [v, n] of counts) if (best === undefined || n > (counts.get(best) ?? 0)) best = v;
  return best;
}
