import type { AuditRecordedEvent, UsageMetric } from '@kb/contracts';
import { isFeedbackEvent } from '../audit/activity-record';

type Deltas = Partial<Record<UsageMetric, number>>;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
/** A signed whole number of bytes (a write adds, a deletion takes away), 0 when absent or not one. */
const bytesOf = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) ? v : 0);
/** Only set when non-zero, so an event adds no row for what it did not change. */
const withBytes = (deltas: Deltas, bytes: number): Deltas => (bytes !== 0 ? { ...deltas, storage_bytes: bytes } : deltas);

/**
 * What one activity event adds to the usage counters (issue 19): a search, an answer, a resource
 * created or deleted, a field processed (paragraphs, characters, media seconds, documents and files
 * without media, the seconds its extraction took) or indexed (paragraphs stored), and the bytes of
 * stored files a write added or took away (`audit_metadata.bytes`, signed: see docs/usage.md). Called once per stored event, so
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
      if (failed(e)) return {};
      const tokens = tokensOf(e);
      return tokens > 0 ? { answers_generated: 1, ai_tokens_used: tokens } : { answers_generated: 1 };
    }
    case 'predict':
      return predictDeltas(e);
    case 'new':
      return withBytes({ resources: 1 }, bytesOf(meta['bytes']));
    case 'deleted':
      return withBytes({ resources: -1 }, bytesOf(meta['bytes']));
    case 'modified':
      return withBytes({}, bytesOf(meta['bytes']));
    case 'indexed':
      return num(meta['paragraphs']) > 0 ? { paragraphs_stored: num(meta['paragraphs']) } : {};
    case 'processed': {
      const usage = meta['usage'];
      if (!usage || typeof usage !== 'object') return withBytes({}, bytesOf(meta['bytes']));
      const u = usage as Record<string, unknown>;
      const media = u['media'] === true;
      const isFile = typeof meta['field'] === 'string' && meta['field'].startsWith('file/');
      const deltas: Deltas = {
        paragraphs_processed: num(u['paragraphs']),
        chars_processed: num(u['characters']),
        media_seconds_processed: num(u['media_seconds']),
        docs_no_media_processed: media ? 0 : num(u['documents']),
        non_media_files_processed: isFile && !media ? 1 : 0,
        pre_processing_time: num(u['processing_seconds']),
        // An unstored file (x-skip-store) deleted once processed: negative.
        storage_bytes: bytesOf(meta['bytes']),
      };
      return Object.fromEntries(Object.entries(deltas).filter(([, v]) => v !== 0)) as Deltas;
    }
    default:
      return {};
  }
}

/** An answer whose generator failed (`error` as sent, its code -1 as stored). */
function failed(e: AuditRecordedEvent): boolean {
  const status = e.details?.['status'];
  return status === 'error' || status === -1 || status === '-1';
}

/**
 * A call of the predict API (docs/predict.md): one prediction; the tokens its generator reported
 * (input and output); and for an understanding-API key, a self-hosted search (a query's vector or
 * query information) or a self-hosted answer (a generation that did not fail), as the gateway
 * classed the call (`details.self_hosted`).
 */
function predictDeltas(e: AuditRecordedEvent): Deltas {
  const d = e.details ?? {};
  const deltas: Deltas = { predictions_performed: 1 };
  const tokens = tokensOf(e);
  if (tokens > 0) deltas.ai_tokens_used = tokens;
  if (d['self_hosted'] === 'search') deltas.self_hosted_searches_performed = 1;
  else if (d['self_hosted'] === 'answer' && !failed(e)) deltas.self_hosted_answers_generated = 1;
  return deltas;
}

/** The model tokens an answer or a prediction reported (input and output). */
function tokensOf(e: AuditRecordedEvent): number {
  const d = e.details ?? {};
  return Math.round(num(d['input_tokens']) + num(d['output_tokens']));
}

/** The UTC hour an instant falls in, as an ISO instant. */
export function hourOf(date: string | Date): string {
  const d = new Date(date);
  d.setUTCMinutes(0, 0, 0);
  return d.toISOString();
}
