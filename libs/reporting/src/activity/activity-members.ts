import type { ActivityMember } from '@kb/contracts';

const detail = (name: string, kind: 'int' | 'string' | 'json'): string =>
  kind === 'int' ? `(e.details ->> '${name}')::numeric` : kind === 'json' ? `(e.details -> '${name}')` : `(e.details ->> '${name}')`;

/**
 * The SQL of each activity record member (the members and their kinds are the contract's,
 * `ACTIVITY_MEMBERS`): constants over the row alias `e`, never built from input. Member names
 * from a request are looked up here after the contract checked them, so no request text ever
 * reaches SQL except as a bound parameter.
 */
export const MEMBER_SQL: Readonly<Record<ActivityMember, string>> = {
  id: 'e.id',
  date: 'e.date',
  user_id: 'e.user_id',
  user_type: 'e.user_type',
  client_type: 'e.client_type',
  total_duration: 'e.total_duration',
  resource_id: 'e.resource_id',
  audit_metadata: 'e.audit_metadata',
  question: detail('question', 'string'),
  resources_count: detail('resources_count', 'int'),
  filter: detail('filter', 'json'),
  learning_id: 'e.learning_id',
  rephrased_question: detail('rephrased_question', 'string'),
  answer: detail('answer', 'string'),
  retrieved_context: detail('retrieved_context', 'json'),
  chat_history: detail('chat_history', 'json'),
  feedback_good: `(CASE WHEN jsonb_typeof(e.feedback -> 'good') = 'boolean' THEN (e.feedback ->> 'good')::boolean END)`,
  feedback_comment: `(e.feedback ->> 'feedback')`,
  feedback: 'e.feedback',
  model: detail('model', 'string'),
  rag_strategies_names: detail('rag_strategies_names', 'json'),
  rag_strategies: detail('rag_strategies', 'json'),
  status: detail('status', 'int'),
  time_to_first_char: detail('time_to_first_char', 'int'),
  event_id: 'e.event_id',
  details: 'e.details',
  chain_seq: 'e.chain_seq',
  chain_hash: 'e.chain_hash',
};
