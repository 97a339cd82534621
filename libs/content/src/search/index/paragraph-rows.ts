import { FIELD_TYPE_LETTER, type ContentFieldType, type ExtractedFieldData } from '@kb/contracts';
import type { ResourceEntity } from '../../entities/resource.entity';
import { analyze } from '../analysis';
import { arr, fieldTags, labelTags, obj, userFieldLabels } from './tags';

/** One paragraph of a field as the index stores it (search_paragraphs, its postings and tags). */
export interface ParagraphRow {
  field: string;
  split: string;
  paragraphId: string;
  start: number;
  end: number;
  idx: number;
  page: number | null;
  /** Where a TRANSCRIPT paragraph starts and ends in its recording, in seconds. */
  startSeconds: number | null;
  endSeconds: number | null;
  text: string;
  kind: string;
  language: string;
  labels: string[];
  ptags: string[];
  terms: Map<string, number>;
  length: number;
}

/** One vectorset's vectors of a field's rows, by paragraph id. */
export interface RowVectors {
  vectorset: string;
  similarity: 'COSINE' | 'DOT';
  byParagraph: Map<string, number[]>;
}

/**
 * Every vectorset a field was vectorised with (`vectors`, the KB's default model, and
 * `vectorsets`, its other semantic models), matched to the rows by split and offsets.
 */
export function vectorSetsOf(extracted: ExtractedFieldData, rows: ParagraphRow[]): RowVectors[] {
  const out = new Map<string, RowVectors>();
  for (const v of [extracted.vectors, ...Object.values(extracted.vectorsets ?? {})]) {
    if (!v?.vectorset || out.has(v.vectorset)) continue;
    const bySplit = new Map<string, Map<string, number[]>>();
    const byParagraph = new Map<string, number[]>();
    for (const r of rows) {
      let offsets = bySplit.get(r.split);
      if (!offsets) {
        offsets = new Map();
        for (const x of (r.split ? v.split_vectors?.[r.split]?.vectors : v.vectors?.vectors) ?? []) {
          if (Array.isArray(x.vector) && x.vector.length) offsets.set(`${x.start_paragraph}-${x.end_paragraph}`, x.vector);
        }
        bySplit.set(r.split, offsets);
      }
      const vector = offsets.get(`${r.start}-${r.end}`);
      if (vector) byParagraph.set(r.paragraphId, vector);
    }
    out.set(v.vectorset, { vectorset: v.vectorset, similarity: v.similarity ?? 'DOT', byParagraph });
  }
  return [...out.values()];
}

export function countTerms(terms: string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}

/** The paragraphs of one processed field, with their terms, tags and labels. */
export function fieldRows(
  resource: ResourceEntity,
  fieldType: ContentFieldType,
  fieldId: string,
  extracted: ExtractedFieldData,
): ParagraphRow[] {
  const letter = FIELD_TYPE_LETTER[fieldType];
  const field = `${letter}/${fieldId}`;
  const user = userFieldLabels(resource.fieldmetadata ?? [], fieldType, fieldId);
  const resourceLabels = labelTags(obj(resource.usermetadata)['classifications']);
  const resourceLanguage = typeof resource.metadata['language'] === 'string' ? (resource.metadata['language'] as string) : '';
  const rows: ParagraphRow[] = [];
  const addText = (split: string, text: string, metadata: Record<string, unknown>): void => {
    const language = (typeof metadata['language'] === 'string' && metadata['language']) || resourceLanguage;
    const ftags = fieldTags(typeof metadata['mime_type'] === 'string' ? metadata['mime_type'] : undefined, metadata['ner'], user.field);
    arr(metadata['paragraphs']).forEach((p, idx) => {
      const po = obj(p);
      const start = Number(po['start']);
      const end = Number(po['end']);
      if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) return;
      const body = text.slice(start, end);
      if (!body.trim()) return;
      const paragraphId =
        typeof po['key'] === 'string' && po['key'] ? po['key'] : `${resource.id}/${field}${split ? `/${split}` : ''}/${start}-${end}`;
      const kind = typeof po['kind'] === 'string' && po['kind'] ? po['kind'] : 'TEXT';
      const plabels = [...labelTags(po['classifications']), ...(user.paragraphs.get(paragraphId) ?? [])];
      const terms = analyze(body, language || undefined);
      const page = obj(po['page'])['page'];
      rows.push({
        field,
        split,
        paragraphId,
        start,
        end,
        idx,
        page: typeof page === 'number' ? page : null,
        startSeconds: firstNumber(po['start_seconds']),
        endSeconds: firstNumber(po['end_seconds']),
        text: body,
        kind,
        language,
        labels: [...new Set([...resourceLabels, ...user.field, ...plabels])],
        ptags: [...new Set([...ftags, ...plabels, `/k/${kind}`])],
        terms: countTerms(terms),
        length: terms.length,
      });
    });
  };
  addText('', extracted.text?.text ?? '', obj(extracted.metadata?.metadata));
  for (const [split, text] of Object.entries(extracted.text?.split_text ?? {}))
    addText(split, text, obj(extracted.metadata?.split_metadata?.[split]));
  return rows;
}

/** The first number of a paragraph's `start_seconds` / `end_seconds` list (extracted metadata), else null. */
function firstNumber(value: unknown): number | null {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'number' && Number.isFinite(first) ? first : null;
}
