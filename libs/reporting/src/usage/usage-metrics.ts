import type { AuditRecordedEvent, UsageMetric } from '@kb/contracts';
import { isFeedbackEvent } from '../audit/activity-record';

type Deltas = Partial<Record<UsageMetric, number>>;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * What one activity event adds to the usage counters (issue 19): a search, an answer, a resource
 * created or deleted, a field processed (paragraphs, characters, media seconds, documents and files
 * without media, the time it took) or indexed (paragraphs stored). Called once per stored event, so
 * a redelivered event (stored once) counts once.
 */
export function usageDeltas(e: AuditRecordedEvent): Deltas {
  const meta = (e.audit_metadata ?? {}) as Record<string, unknown>;
  switch (e.type) {
    case 'search':
      return { searches_performed: 1 };
    case 'chat': {
      if (isFeedbackEvent(e)) return {};
      // An answer the generator failed to give is not one generated (`error` as sent, its code -1 as stored).
      const status = e.details?.['status'];
      return status === 'error' || status === -1 || status === '-1' ? {} : { answers_generated: 1 };
    }
    case 'new':
      return { resources: 1 };
    case 'deleted':
      return { resources: -1 };
    case 'indexed':
      return num(meta['paragraphs']) > 0 ? { paragraphs_stored: num(meta['paragraphs']) } : {};
    case 'processed': {
      const usage = meta['usage'];
      if (!usage || typeof usage !== 'object') return {};
      const u = usage as Record<string, unknown>;
      const media = u['media'] === true;
      const isFile = typeof meta['field'] === 'string' && meta['field'].startsWith('file/');
      const deltas: Deltas = {
        paragraphs_processed: num(u['paragraphs']),
        chars_processed: num(u['characters']),
        media_seconds_processed: num(u['media_seconds']),
        docs_no_media_processed: media ? 0 : num(u['documents']),
        non_media_files_processed: isFile && !media ? 1 : 0,
        pre_processing_time: num(u['processing_seconds']) || num(e.total_duration) / 1000,
        storage_bytes: num(u['bytes']),
      };
      return Object.fromEntries(Object.entries(deltas).filter(([, v]) => v !== 0)) as Deltas;
    }
    default:
      return {};
  }
}

/** The UTC hour an instant falls in, as an ISO instant. */
export function hourOf(date: string | Date): string {
  const d = new Date(date);
  d.setUTCMinutes(0, 0, 0);
  return d.toISOString();
}
