import type { AuditRecordedEvent } from '@kb/contracts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : undefined);

/** `/ask` answer statuses as the reference's activity `status` codes (its AnswerStatusCode). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const STATUS_CODES: Record<string, number> = { success: 0, error: -1, no_context: -2, no_retrieval_data: -3 };

/**
 * A `/feedback` call arrives as a `chat` event carrying only `details.feedback`: it is not a record
 * of its own but is merged into the chat record with the same learning id.
 */
export function isFeedbackEvent(e: AuditRecordedEvent): boolean {
  const d = e.details;
  return e.type === 'chat' && isObject(d) && isObject(d['feedback']) && d['answer'] === undefined && d['question'] === undefined;
}

/**
 * The stored `details`: the members of spec 6.1 under their record names (the content service's
 * own names — `query`, `filters`, `strategies` — mapped), numbers only where numbers are expected
 * (the query casts them), anything else the publisher added kept alongside.
 */
export function recordDetails(e: AuditRecordedEvent): { details: Record<string, unknown>; learning_id: string | null } {
  const d = isObject(e.details) ? e.details : {};
  const out: Record<string, unknown> = { ...d };
  delete out['query'];
  delete out['filters'];
  delete out['strategies'];
  const question = str(d['question']) ?? str(d['query']);
  if (question !== undefined) out['question'] = question;
  const resources = int(d['resources_count']);
  if (resources !== undefined) out['resources_count'] = resources;
  else delete out['resources_count'];
  if (d['filters'] !== undefined || d['filter'] !== undefined) out['filter'] = d['filter'] ?? d['filters'];
  const names = d['rag_strategies_names'] ?? d['strategies'];
  if (names !== undefined) out['rag_strategies_names'] = names;
  if (typeof d['status'] === 'string') {
    const code = STATUS_CODES[d['status']];
    if (code === undefined) delete out['status'];
    else out['status'] = code;
  } else if (int(d['status']) === undefined) delete out['status'];
  const first = int(d['time_to_first_char']);
  if (first !== undefined) out['time_to_first_char'] = first;
  else delete out['time_to_first_char'];
  // The understanding-API key that caused the event, from the event's own member only (never a publisher's detail).
  delete out['nua_key_id'];
  if (typeof e.nua_key_id === 'string' && UUID.test(e.nua_key_id)) out['nua_key_id'] = e.nua_key_id.toLowerCase();
  const learning = str(d['learning_id']);
  return { details: out, learning_id: e.type === 'chat' && learning ? learning : null };
}

export interface FeedbackRow {
  kbid: string;
  learning_id: string;
  feedback: Record<string, unknown>;
}

/**
 * The feedback to merge: on the answer itself `{good, feedback, task, date}`; on one text block of
 * it, under `text_blocks.<id>`. Later feedback on the same target replaces the earlier.
 */
export function feedbackRow(e: AuditRecordedEvent): FeedbackRow | null {
  const f = (e.details as Record<string, unknown>)['feedback'] as Record<string, unknown>;
  const learningId = str(f['learning_id']) ?? str((e.details as Record<string, unknown>)['learning_id']);
  if (!learningId) return null;
  const entry = {
    good: typeof f['good'] === 'boolean' ? f['good'] : null,
    feedback: str(f['feedback']) ?? null,
    task: str(f['task']) ?? null,
    date: e.date,
  };
  const block = str(f['text_block_id']);
  return { kbid: e.kbid, learning_id: learningId, feedback: block ? { text_blocks: { [block]: entry } } : entry };
}

/** Merges feedback like the upsert does (shallow, `text_blocks` merged by block). */
export function mergeFeedback(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const blocks = { ...(isObject(a['text_blocks']) ? a['text_blocks'] : {}), ...(isObject(b['text_blocks']) ? b['text_blocks'] : {}) };
  return { ...a, ...b, ...(Object.keys(blocks).length ? { text_blocks: blocks } : {}) };
}
