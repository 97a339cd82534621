import type { AuditEventType } from '../content/audit.event';

export type ActivityMemberKind = 'int' | 'string' | 'bool' | 'json' | 'date';

export interface ActivityMemberSpec {
  kind: ActivityMemberKind;
  /** Whether filters may name it (the others are `show` only, like the reference's ShowOnly members). */
  filterable: boolean;
  /** Event types having it; absent: every type. */
  types?: readonly AuditEventType[];
}

const SEARCHES: readonly AuditEventType[] = ['search', 'suggest', 'chat', 'ask', 'retrieve', 'augment'];
const CHATS: readonly AuditEventType[] = ['chat', 'ask'];

/**
 * THE allow-list of activity record members (spec 6.1): what a query's `show` may include and its
 * `filters` may compare, by kind. The reporting service maps each to its SQL
 * (libs/reporting/src/activity/activity-members.ts); a name not listed here is refused (422).
 */
export const ACTIVITY_MEMBERS = {
  id: { kind: 'int', filterable: true },
  date: { kind: 'date', filterable: false },
  user_id: { kind: 'string', filterable: true },
  user_type: { kind: 'string', filterable: true },
  client_type: { kind: 'string', filterable: true },
  total_duration: { kind: 'int', filterable: true },
  resource_id: { kind: 'string', filterable: true },
  audit_metadata: { kind: 'json', filterable: true },
  question: { kind: 'string', filterable: true, types: SEARCHES },
  resources_count: { kind: 'int', filterable: true, types: SEARCHES },
  filter: { kind: 'json', filterable: false, types: SEARCHES },
  learning_id: { kind: 'string', filterable: true, types: CHATS },
  rephrased_question: { kind: 'string', filterable: true, types: CHATS },
  answer: { kind: 'string', filterable: true, types: CHATS },
  retrieved_context: { kind: 'json', filterable: false, types: CHATS },
  chat_history: { kind: 'json', filterable: false, types: CHATS },
  feedback_good: { kind: 'bool', filterable: true, types: CHATS },
  feedback_comment: { kind: 'string', filterable: true, types: CHATS },
  feedback: { kind: 'json', filterable: false, types: CHATS },
  model: { kind: 'string', filterable: true, types: CHATS },
  rag_strategies_names: { kind: 'json', filterable: false, types: CHATS },
  rag_strategies: { kind: 'json', filterable: false, types: CHATS },
  status: { kind: 'int', filterable: true, types: CHATS },
  time_to_first_char: { kind: 'int', filterable: true, types: CHATS },
  // Show only: what an exported log needs to be verified offline (`npm run activity:verify`, docs/activity.md).
  event_id: { kind: 'string', filterable: false },
  details: { kind: 'json', filterable: false },
  chain_seq: { kind: 'int', filterable: false },
  chain_hash: { kind: 'string', filterable: false },
} as const satisfies Record<string, ActivityMemberSpec>;

export type ActivityMember = keyof typeof ACTIVITY_MEMBERS;

export const ACTIVITY_MEMBER_NAMES = Object.keys(ACTIVITY_MEMBERS) as ActivityMember[];

export const isActivityMember = (name: string): name is ActivityMember => Object.prototype.hasOwnProperty.call(ACTIVITY_MEMBERS, name);

/** Members a record of `type` has; every member when the type is unknown. */
export function activityMembersOf(type: AuditEventType | undefined): ActivityMember[] {
  return ACTIVITY_MEMBER_NAMES.filter((name) => {
    const types = (ACTIVITY_MEMBERS[name] as ActivityMemberSpec).types;
    return type === undefined || !types || types.includes(type);
  });
}

/** Members shown when `show` is empty (as the reference: id and date, plus the question and answer where there are some). */
export function defaultActivityShow(type: AuditEventType): ActivityMember[] {
  if (CHATS.includes(type)) return ['id', 'date', 'question', 'rephrased_question', 'answer', 'rag_strategies_names'];
  if (SEARCHES.includes(type)) return ['id', 'date', 'question', 'resources_count'];
  return ['id', 'date'];
}

/** Members shown only when named (not by `show: "all"`): the stored record as a chain hash covers it. */
export const ACTIVITY_EXPORT_MEMBERS: ReadonlySet<ActivityMember> = new Set<ActivityMember>([
  'event_id',
  'details',
  'chain_seq',
  'chain_hash',
]);

/** `show` names one key of a record's audit metadata as `audit_metadata.<key>`. */
export const AUDIT_METADATA_PREFIX = 'audit_metadata.';

/** What `show` may name: a member, or one key of the audit metadata. */
export type ActivityShown = ActivityMember | `audit_metadata.${string}`;

/**
 * One activity record as a query answers it: the members `show` asked for (id and date always),
 * numbers as numbers, dates as ISO text, stored JSON (metadata, context, history) as stored, an
 * absent member as null.
 */
export type ActivityRecord = { [member in ActivityShown]?: unknown };
