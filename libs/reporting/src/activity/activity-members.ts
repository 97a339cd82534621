import type { AuditEventType } from '@kb/contracts';

export type MemberKind = 'int' | 'string' | 'bool' | 'json' | 'date';

export interface Member {
  /** SQL expression over the row alias `e`: a constant of this table, never built from input. */
  sql: string;
  kind: MemberKind;
  /** Whether filters may name it (the others are `show` only, like the reference's ShowOnly members). */
  filterable: boolean;
  /** Event types having it; absent: every type. */
  types?: readonly AuditEventType[];
}

const SEARCHES: readonly AuditEventType[] = ['search', 'suggest', 'chat', 'ask', 'retrieve', 'augment'];
const CHATS: readonly AuditEventType[] = ['chat', 'ask'];
const detail = (name: string, kind: MemberKind, filterable: boolean, types: readonly AuditEventType[]): Member => ({
  sql: kind === 'int' ? `(e.details ->> '${name}')::numeric` : kind === 'json' ? `(e.details -> '${name}')` : `(e.details ->> '${name}')`,
  kind,
  filterable,
  types,
});

/**
 * THE allow-list of activity record members (spec 6.1): what `show` may include and `filters` may
 * compare, with the SQL each maps to. Member names from a request are looked up here; anything else
 * is refused (422), so no request text ever reaches SQL except as a bound parameter.
 */
export const MEMBERS: Readonly<Record<string, Member>> = {
  id: { sql: 'e.id', kind: 'int', filterable: true },
  date: { sql: 'e.date', kind: 'date', filterable: false },
  user_id: { sql: 'e.user_id', kind: 'string', filterable: true },
  user_type: { sql: 'e.user_type', kind: 'string', filterable: true },
  client_type: { sql: 'e.client_type', kind: 'string', filterable: true },
  total_duration: { sql: 'e.total_duration', kind: 'int', filterable: true },
  resource_id: { sql: 'e.resource_id', kind: 'string', filterable: true },
  audit_metadata: { sql: 'e.audit_metadata', kind: 'json', filterable: true },
  question: detail('question', 'string', true, SEARCHES),
  resources_count: detail('resources_count', 'int', true, SEARCHES),
  filter: detail('filter', 'json', false, SEARCHES),
  learning_id: { sql: 'e.learning_id', kind: 'string', filterable: true, types: CHATS },
  rephrased_question: detail('rephrased_question', 'string', true, CHATS),
  answer: detail('answer', 'string', true, CHATS),
  retrieved_context: detail('retrieved_context', 'json', false, CHATS),
  chat_history: detail('chat_history', 'json', false, CHATS),
  feedback_good: {
    sql: `(CASE WHEN jsonb_typeof(e.feedback -> 'good') = 'boolean' THEN (e.feedback ->> 'good')::boolean END)`,
    kind: 'bool',
    filterable: true,
    types: CHATS,
  },
  feedback_comment: { sql: `(e.feedback ->> 'feedback')`, kind: 'string', filterable: true, types: CHATS },
  feedback: { sql: 'e.feedback', kind: 'json', filterable: false, types: CHATS },
  model: detail('model', 'string', true, CHATS),
  rag_strategies_names: detail('rag_strategies_names', 'json', false, CHATS),
  rag_strategies: detail('rag_strategies', 'json', false, CHATS),
  status: detail('status', 'int', true, CHATS),
  time_to_first_char: detail('time_to_first_char', 'int', true, CHATS),
  // Show only: what an exported log needs to be verified offline (`npm run activity:verify`, docs/activity.md).
  event_id: { sql: 'e.event_id', kind: 'string', filterable: false },
  details: { sql: 'e.details', kind: 'json', filterable: false },
  chain_seq: { sql: 'e.chain_seq', kind: 'int', filterable: false },
  chain_hash: { sql: 'e.chain_hash', kind: 'string', filterable: false },
};

/** Members shown when `show` is empty (as the reference: id and date, plus the question and answer where there are some). */
export function defaultShow(type: AuditEventType): string[] {
  if (CHATS.includes(type)) return ['id', 'date', 'question', 'rephrased_question', 'answer', 'rag_strategies_names'];
  if (SEARCHES.includes(type)) return ['id', 'date', 'question', 'resources_count'];
  return ['id', 'date'];
}

/** Members shown only when named (not by `show: "all"`): the stored record as a chain hash covers it. */
export const EXPORT_MEMBERS: ReadonlySet<string> = new Set(['event_id', 'details', 'chain_seq', 'chain_hash']);

export function membersOf(type: AuditEventType): string[] {
  return Object.entries(MEMBERS)
    .filter(([, m]) => !m.types || m.types.includes(type))
    .map(([name]) => name);
}
