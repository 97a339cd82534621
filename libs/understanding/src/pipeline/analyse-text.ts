import type { ExtractedVector } from '@kb/contracts';
import {
  detectLanguage,
  entityRelations,
  extractEntities,
  extractiveSummary,
  sentenceSpans,
  toSpecNer,
  type Embedder,
  type RelationRecord,
  type SpecNer,
} from './analysis';
import type { ExtractedParagraph } from './extractors';
import { chunkSpans, splitParagraphs, type ChunkSizes, type Span } from './split';

/** Paragraph record of `extracted.metadata` (spec 2.3 "Paragraph shape"). */
export interface SpecParagraph {
  start: number;
  end: number;
  start_seconds: number[];
  end_seconds: number[];
  kind: string;
  classifications: { labelset: string; label: string }[];
  sentences: { start: number; end: number; key: string }[];
  key: string;
  page: { page: number; page_with_visual: boolean };
  representation: { is_a_table: boolean; reference_file: string };
  relations: { parents: string[]; siblings: string[]; replacements: string[] };
}

/** Everything the analysis step learns about one text (a field, or one split of a conversation). */
export interface AnalysedText {
  text: string;
  language?: string;
  paragraphs: SpecParagraph[];
  ner: SpecNer;
  relations: RelationRecord[];
  summary: string;
}

export interface AnalyseOptions {
  /** Paragraphs from the extractor (pages, titles, tables); else the text is split at blank lines. */
  paragraphs?: ExtractedParagraph[];
  /** A language the client or the document declared; detection runs only without one. */
  language?: string;
  rid: string;
  /** `rid/<letter>/<field>[/<split>]`, the prefix of paragraph ids (API-MAP 4.3). */
  fieldKey: string;
  /** A split strategy: longer paragraphs are cut into chunks of this size. */
  chunks?: ChunkSizes;
}

/** 'en-US' → 'en': the analysers know primary subtags only. */
export function normaliseLanguage(language: string | undefined): string | undefined {
  const primary = language?.trim().toLowerCase().split(/[-_]/)[0];
  return primary ? primary : undefined;
}

export function analyseText(text: string, options: AnalyseOptions): AnalysedText {
  const language = normaliseLanguage(options.language) ?? detectLanguage(text);
  const found: (Span & { kind?: string; page?: number; is_a_table?: boolean; start_seconds?: number; end_seconds?: number })[] = options
    .paragraphs?.length
    ? options.paragraphs
    : splitParagraphs(text);
  const spans = options.chunks ? chunkSpans(text, found, options.chunks) : found;
  const allSentences: Span[] = [];
  const paragraphs = spans.map((p): SpecParagraph => {
    const sentences = sentenceSpans(text, p.start, p.end, language);
    allSentences.push(...sentences);
    return {
      start: p.start,
      end: p.end,
      start_seconds: p.start_seconds !== undefined ? [p.start_seconds] : [],
      end_seconds: p.end_seconds !== undefined ? [p.end_seconds] : [],
      kind: p.kind ?? 'TEXT',
      classifications: [],
      sentences: sentences.map((s) => ({ start: s.start, end: s.end, key: '' })),
      key: `${options.fieldKey}/${p.start}-${p.end}`,
      page: { page: p.page ?? 0, page_with_visual: false },
      representation: { is_a_table: p.is_a_table ?? p.kind === 'TABLE', reference_file: '' },
      relations: { parents: [], siblings: [], replacements: [] },
    };
  });
  const { entities } = extractEntities(text, language);
  return {
    text,
    ...(language ? { language } : {}),
    paragraphs,
    ner: toSpecNer(entities),
    relations: entityRelations(options.rid, entities, { fieldId: options.fieldKey, paragraphs: spans }),
    summary: extractiveSummary(text, allSentences).text,
  };
}

/**
 * One vector per paragraph, for every text at once: the built-in model runs 2–3× faster on
 * batches than one text at a time, so a conversation's messages share batches too.
 */
export async function paragraphVectors(embedder: Embedder, texts: AnalysedText[]): Promise<ExtractedVector[][]> {
  const inputs = texts.flatMap((t) => t.paragraphs.map((p) => t.text.slice(p.start, p.end)));
  const vectors = await embedder.embedPassages(inputs);
  let next = 0;
  return texts.map((t) =>
    t.paragraphs.map((p) => ({
      start: p.start,
      end: p.end,
      start_paragraph: p.start,
      end_paragraph: p.end,
      vector: vectors[next++] ?? [],
    })),
  );
}
