import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';

/** Longest resource summary assembled from its fields' summaries. */
const MAX_CHARS = 600;
const TYPE_ORDER = ['text', 'file', 'link', 'conversation'];
/** Fields whose text is a list of words or a date, not prose: never a resource's summary. */
const NOT_SUMMARISED = new Set(['keywordset', 'datetime']);
/** Set in `computedmetadata` while the resource's summary is the one processing wrote (never shown). */
export const SUMMARY_GENERATED = 'summary_generated';

/**
 * A resource's extractive summary (issue 5): its fields' summaries (processing's, each a few
 * central sentences) in field order, within 600 characters. Written only where the user gave none,
 * and kept up to date while it is processing's own; a summary the user writes is never replaced.
 * Undefined: leave the resource as it is.
 */
export function resourceSummaryPatch(
  resource: Pick<ResourceEntity, 'summary' | 'computedmetadata'>,
  fields: Pick<FieldEntity, 'fieldType' | 'fieldId' | 'status' | 'extracted'>[],
): Partial<ResourceEntity> | undefined {
  const generated = resource.computedmetadata?.[SUMMARY_GENERATED] === true;
  if (resource.summary !== '' && !generated) return undefined;
  const ordered = [...fields].sort(
    (a, b) => TYPE_ORDER.indexOf(a.fieldType) - TYPE_ORDER.indexOf(b.fieldType) || a.fieldId.localeCompare(b.fieldId),
  );
  let summary = '';
  for (const f of ordered) {
    if (f.status !== 'PROCESSED' || NOT_SUMMARISED.has(f.fieldType)) continue;
    const metadata = (f.extracted?.['metadata'] as { metadata?: { summary?: unknown } } | undefined)?.metadata;
    const text = typeof metadata?.summary === 'string' ? metadata.summary.trim() : '';
    if (!text) continue;
    const next = summary ? `${summary} ${text}` : text;
    if (next.length > MAX_CHARS) {
      if (!summary) summary = text.slice(0, MAX_CHARS);
      break;
    }
    summary = next;
  }
  if (summary === resource.summary) return undefined;
  return { summary, computedmetadata: { ...(resource.computedmetadata ?? {}), [SUMMARY_GENERATED]: summary !== '' } };
}
