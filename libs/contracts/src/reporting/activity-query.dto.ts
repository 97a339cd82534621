import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { ClassConstructor } from 'class-transformer';
import { collectIssues } from '../common/validation';
import { AuditEventTypes, type AuditEventType } from '../content/audit.event';
import { Check, checks, Closed, isPlainObject, whenAbsent, type Loc, type MemberCheck } from '../common/member-checks';
import type { ValidationIssue } from '../common/errors';
import {
  ACTIVITY_MEMBERS,
  activityMembersOf,
  AUDIT_METADATA_PREFIX,
  isActivityMember,
  type ActivityMember,
  type ActivityMemberKind,
} from './activity-members';

/** Bounds on a query, so that one request cannot become an expensive statement (beyond them: 422). */
export const ACTIVITY_LIMITS = {
  /** Comparisons in `filters`, all members together (each operator counts). */
  comparisons: 20,
  /** Entries of `filters.audit_metadata`. */
  metadataFilters: 10,
  /** Members in `show`. */
  show: 60,
  /** Characters of a compared string value. */
  valueChars: 1000,
  /** Characters of a like/ilike pattern. */
  patternChars: 200,
  /** Characters of an audit_metadata key. */
  keyChars: 100,
  /** Records per page. */
  pageSize: 1000,
  /** Records per page when `limit` is not given. */
  defaultPageSize: 10,
} as const;

export const ACTIVITY_OPERATORS = ['eq', 'gt', 'ge', 'lt', 'le', 'ne', 'isnull'] as const;
export const ACTIVITY_PATTERNS = ['like', 'ilike'] as const;
export type ActivityOperator = (typeof ACTIVITY_OPERATORS)[number] | (typeof ACTIVITY_PATTERNS)[number];
const YEAR_MONTH = /^\d{4}-(0[1-9]|1[012])$/;

// ---- The declarations (what the document says; the checks below say the same) ------------------

/** A comparison of a text member: `like`/`ilike` take `%` and `_` as wildcards and `\` as escape. */
export class ActivityStringComparison {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.valueChars }) eq?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.valueChars }) gt?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.valueChars }) ge?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.valueChars }) lt?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.valueChars }) le?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: ACTIVITY_LIMITS.valueChars,
    description: 'Keeps records without the member.',
  })
  ne?: string | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'true: the member is absent; false: present.' }) isnull?:
    boolean | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.patternChars }) like?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ACTIVITY_LIMITS.patternChars, description: 'Case-insensitive like.' })
  ilike?: string | null;
}

/** A comparison of a number member. */
export class ActivityIntComparison {
  @ApiPropertyOptional({ type: 'integer', nullable: true }) eq?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) gt?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) ge?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) lt?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) le?: number | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'Keeps records without the member.' }) ne?: number | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'true: the member is absent; false: present.' }) isnull?:
    boolean | null;
}

/** A comparison of a yes/no member. */
export class ActivityBoolComparison {
  @ApiPropertyOptional({ type: Boolean, nullable: true }) eq?: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'Keeps records without the member.' }) ne?: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true, description: 'true: the member is absent; false: present.' }) isnull?:
    boolean | null;
}

/** A comparison of one key of a record's audit metadata (its value as text). */
export class ActivityMetadataComparison extends ActivityStringComparison {
  @ApiProperty({ minLength: 1, maxLength: ACTIVITY_LIMITS.keyChars }) key!: string;
}

export type ActivityComparison = ActivityStringComparison | ActivityIntComparison | ActivityBoolComparison;

const stringFilter = { type: () => ActivityStringComparison, nullable: true };
const intFilter = { type: () => ActivityIntComparison, nullable: true };
const boolFilter = { type: () => ActivityBoolComparison, nullable: true };

/**
 * `filters`: per member a comparison by its kind; members of other event types and show-only
 * members are refused. Each operator given counts as one comparison.
 */
export class ActivityFilters {
  @ApiPropertyOptional(intFilter) id?: ActivityIntComparison | null;
  @ApiPropertyOptional(stringFilter) user_id?: ActivityStringComparison | null;
  @ApiPropertyOptional(stringFilter) user_type?: ActivityStringComparison | null;
  @ApiPropertyOptional(stringFilter) client_type?: ActivityStringComparison | null;
  @ApiPropertyOptional(intFilter) total_duration?: ActivityIntComparison | null;
  @ApiPropertyOptional(stringFilter) resource_id?: ActivityStringComparison | null;
  @ApiPropertyOptional({ type: () => [ActivityMetadataComparison], nullable: true, maxItems: ACTIVITY_LIMITS.metadataFilters })
  audit_metadata?: ActivityMetadataComparison[] | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Searches and chats.' }) question?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...intFilter, description: 'Searches and chats.' }) resources_count?: ActivityIntComparison | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Chats.' }) learning_id?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Chats.' }) rephrased_question?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Chats.' }) answer?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...boolFilter, description: 'Chats.' }) feedback_good?: ActivityBoolComparison | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Chats.' }) feedback_comment?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...stringFilter, description: 'Chats.' }) model?: ActivityStringComparison | null;
  @ApiPropertyOptional({ ...intFilter, description: 'Chats.' }) status?: ActivityIntComparison | null;
  @ApiPropertyOptional({ ...intFilter, description: 'Chats.' }) time_to_first_char?: ActivityIntComparison | null;
}

/** A page of records: `starting_after` reads forwards from a record id, `ending_before` backwards. */
export class ActivityPagination {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: ACTIVITY_LIMITS.pageSize, default: ACTIVITY_LIMITS.defaultPageSize })
  limit?: number | null;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, nullable: true, description: 'A record id.' }) starting_after?: number | null;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, nullable: true, description: 'A record id (not with starting_after).' })
  ending_before?: number | null;
}

// ---- The checks (every problem at once, with the messages clients know) -------------------------

const absent = (v: unknown): boolean => v === undefined || v === null;

const yearMonthCheck: MemberCheck = whenAbsent((v, loc, issues) => {
  if (absent(v)) issues.push({ loc, msg: 'Field required', type: 'missing' });
  else if (typeof v !== 'string' || !YEAR_MONTH.test(v))
    issues.push({ loc, msg: 'year_month must be in the format YYYY-MM', type: 'value_error' });
  // Months outside 1970-9998 hold no events, and their bounds would not be plain ISO instants.
  else if (Number(v.slice(0, 4)) < 1970 || Number(v.slice(0, 4)) > 9998)
    issues.push({ loc, msg: 'year_month must be between 1970-01 and 9998-12', type: 'value_error' });
});

function showCheck(known: readonly ActivityMember[]): MemberCheck {
  return (v, loc, issues) => {
    if (absent(v) || v === 'all') return;
    if (!Array.isArray(v)) return void issues.push({ loc, msg: "Input should be a valid list or 'all'", type: 'list_type' });
    if (v.length > ACTIVITY_LIMITS.show)
      return void issues.push({ loc, msg: `List should have at most ${ACTIVITY_LIMITS.show} items`, type: 'too_long' });
    const names: string[] = [];
    v.forEach((item: unknown, i) => {
      if (typeof item !== 'string') issues.push({ loc: [...loc, i], msg: 'Input should be a valid string', type: 'string_type' });
      else if (
        item.startsWith(AUDIT_METADATA_PREFIX) &&
        item.length > AUDIT_METADATA_PREFIX.length &&
        item.length <= AUDIT_METADATA_PREFIX.length + ACTIVITY_LIMITS.keyChars
      )
        names.push(item);
      else if (!(known as readonly string[]).includes(item))
        issues.push({ loc: [...loc, i], msg: `${item} is not a field. List of fields: ${known.join(', ')}`, type: 'value_error' });
      else if (names.includes(item)) issues.push({ loc: [...loc, i], msg: 'Set items should be unique', type: 'unique' });
      else names.push(item);
    });
  };
}

function filtersCheck(known: readonly ActivityMember[]): MemberCheck {
  return whenAbsent((v, loc, issues) => {
    if (absent(v)) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
    let comparisons = 0;
    for (const [name, f] of Object.entries(v)) {
      const at = [...loc, name];
      if (!isActivityMember(name) || !known.includes(name)) {
        issues.push({ loc: at, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        continue;
      }
      const member = ACTIVITY_MEMBERS[name];
      if (!member.filterable) {
        issues.push({ loc: at, msg: `${name} can be shown, not filtered`, type: 'value_error' });
        continue;
      }
      if (absent(f)) continue;
      if (name === 'audit_metadata') {
        comparisons += metadataComparisons(f, at, issues);
        continue;
      }
      if (!isPlainObject(f)) {
        issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
        continue;
      }
      comparisons += comparisonIssues(member.kind, f, at, issues);
    }
    if (comparisons > ACTIVITY_LIMITS.comparisons)
      issues.push({ loc, msg: `At most ${ACTIVITY_LIMITS.comparisons} comparisons may be sent`, type: 'too_long' });
  });
}

function metadataComparisons(f: unknown, loc: Loc, issues: ValidationIssue[]): number {
  if (!Array.isArray(f)) return (void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' }), 0);
  if (f.length > ACTIVITY_LIMITS.metadataFilters)
    return (void issues.push({ loc, msg: `List should have at most ${ACTIVITY_LIMITS.metadataFilters} items`, type: 'too_long' }), 0);
  let n = 0;
  f.forEach((entry: unknown, i) => {
    const at = [...loc, i];
    if (!isPlainObject(entry)) return void issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
    const key = entry['key'];
    if (typeof key !== 'string' || key === '') return void issues.push({ loc: [...at, 'key'], msg: 'Field required', type: 'missing' });
    if (key.length > ACTIVITY_LIMITS.keyChars)
      return void issues.push({
        loc: [...at, 'key'],
        msg: `String should have at most ${ACTIVITY_LIMITS.keyChars} characters`,
        type: 'string_too_long',
      });
    const { key: _key, ...ops } = entry;
    n += comparisonIssues('string', ops, at, issues);
  });
  return n;
}

/** The operators a member of `kind` may be compared with. */
export function activityOperatorsOf(kind: ActivityMemberKind): readonly ActivityOperator[] {
  return kind === 'string' ? [...ACTIVITY_OPERATORS, ...ACTIVITY_PATTERNS] : kind === 'bool' ? ['eq', 'ne', 'isnull'] : ACTIVITY_OPERATORS;
}

/** One comparison object (`{eq, gt, ge, lt, le, ne, isnull}` and for strings `like`, `ilike`); returns how many it holds. */
function comparisonIssues(kind: ActivityMemberKind, ops: Record<string, unknown>, loc: Loc, issues: ValidationIssue[]): number {
  const allowed: readonly string[] = activityOperatorsOf(kind);
  let n = 0;
  for (const [op, value] of Object.entries(ops)) {
    const at = [...loc, op];
    if (!allowed.includes(op)) {
      issues.push({ loc: at, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      continue;
    }
    if (absent(value)) continue;
    n += 1;
    if (op === 'isnull' || kind === 'bool') {
      if (typeof value !== 'boolean') issues.push({ loc: at, msg: 'Input should be a valid boolean', type: 'bool_type' });
    } else if (kind === 'int') {
      if (!Number.isSafeInteger(value)) issues.push({ loc: at, msg: 'Input should be a valid integer', type: 'int_type' });
    } else if (typeof value !== 'string') issues.push({ loc: at, msg: 'Input should be a valid string', type: 'string_type' });
    else {
      const max = op === 'like' || op === 'ilike' ? ACTIVITY_LIMITS.patternChars : ACTIVITY_LIMITS.valueChars;
      if (value.length > max) issues.push({ loc: at, msg: `String should have at most ${max} characters`, type: 'string_too_long' });
    }
  }
  return n;
}

function cursorCheck(v: unknown, loc: Loc, issues: ValidationIssue[]): boolean {
  if (absent(v)) return false;
  if (!Number.isSafeInteger(v) || (v as number) < 0) {
    issues.push({ loc, msg: 'Input should be a valid non-negative integer', type: 'int_type' });
    return false;
  }
  return true;
}

const paginationCheck: MemberCheck = (v, loc, issues) => {
  if (absent(v)) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  for (const k of Object.keys(v))
    if (!['limit', 'starting_after', 'ending_before'].includes(k))
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  checks.int(0, ACTIVITY_LIMITS.pageSize)(v['limit'], [...loc, 'limit'], issues, v);
  const after = cursorCheck(v['starting_after'], [...loc, 'starting_after'], issues);
  const before = cursorCheck(v['ending_before'], [...loc, 'ending_before'], issues);
  if (after && before) issues.push({ loc, msg: 'Send starting_after or ending_before, not both', type: 'value_error' });
};

// ---- The bodies ---------------------------------------------------------------------------------

const SHOW_SCHEMA: ApiPropertyOptions = {
  oneOf: [
    {
      type: 'array',
      maxItems: ACTIVITY_LIMITS.show,
      items: { type: 'string' },
      description: 'Members of the record (spec 6.1), or `audit_metadata.<key>` for one metadata key.',
    },
    { type: 'string', enum: ['all'] },
  ],
  description:
    'Members to include, or "all"; empty: id, date and, for searches and chats, the question and answer; id and date are always included. ' +
    '`event_id`, `details`, `chain_seq` and `chain_hash` (what an exported log needs to be verified offline) only when named.',
};

/**
 * Query Knowledgebox Activity Logs (spec 4.4, API-MAP §1.4): one month of one event type, the
 * members to show, filters on members and metadata keys, a page. The members a body may name
 * depend on the event type: `activityQueryBodyOf(type)` is the class that checks a body for it.
 */
@Closed()
export class ActivityQueryBody {
  @ApiProperty({ example: '2026-11', pattern: YEAR_MONTH.source, description: 'The UTC month (1970-01 to 9998-12).' })
  @Check(yearMonthCheck)
  year_month!: string;

  @ApiPropertyOptional(SHOW_SCHEMA)
  @Check(showCheck(activityMembersOf(undefined)))
  show?: string[] | 'all' | null;

  @ApiProperty({
    type: () => ActivityFilters,
    description: `At most ${ACTIVITY_LIMITS.comparisons} comparisons and ${ACTIVITY_LIMITS.metadataFilters} metadata filters; an empty object matches every record.`,
  })
  @Check(filtersCheck(activityMembersOf(undefined)))
  filters!: ActivityFilters;

  @ApiPropertyOptional({ type: () => ActivityPagination, nullable: true })
  @Check(paginationCheck)
  pagination?: ActivityPagination | null;
}

export const ACTIVITY_DOWNLOAD_LIMITS = { emailChars: 320 } as const;

/** Request The Preparation Of Knowledgebox Activity Logs Download: the query without `pagination` (every record), and an e-mail notice. */
@Closed()
export class ActivityDownloadBody {
  @ApiProperty({ example: '2026-11', pattern: YEAR_MONTH.source, description: 'The UTC month (1970-01 to 9998-12).' })
  @Check(yearMonthCheck)
  year_month!: string;

  @ApiPropertyOptional(SHOW_SCHEMA)
  @Check(showCheck(activityMembersOf(undefined)))
  show?: string[] | 'all' | null;

  @ApiProperty({ type: () => ActivityFilters, description: 'As the query’s.' })
  @Check(filtersCheck(activityMembersOf(undefined)))
  filters!: ActivityFilters;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: ACTIVITY_DOWNLOAD_LIMITS.emailChars,
    description: 'Where to send the notice (required with notify_via_email).',
  })
  @Check(
    whenAbsent((v, loc, issues, owner) => {
      if (!absent(v) && (typeof v !== 'string' || v.length > ACTIVITY_DOWNLOAD_LIMITS.emailChars || !/^[^@\s]+@[^@\s]+$/.test(v)))
        issues.push({ loc, msg: 'Input should be a valid e-mail address or null', type: 'value_error' });
      else if (owner['notify_via_email'] === true && (typeof v !== 'string' || v === ''))
        issues.push({ loc, msg: 'An e-mail address is required to be notified by e-mail', type: 'missing' });
    }),
  )
  email_address?: string | null;

  @ApiPropertyOptional({
    default: false,
    description: 'E-mail a notice with the link once the file is ready (422 when the service has no SMTP configured).',
  })
  @Check((v, loc, issues) => {
    if (v !== undefined && typeof v !== 'boolean') issues.push({ loc, msg: 'Input should be a valid boolean', type: 'bool_type' });
  })
  notify_via_email?: boolean;

  /** Not accepted: a download holds every matching record (declared so that its refusal says why). */
  @Check((v, loc, issues) => {
    if (v !== undefined)
      issues.push({ loc, msg: 'A download holds every matching record: pagination is not accepted', type: 'extra_forbidden' });
  })
  pagination?: never;
}

/** The query a download stores and its job reads: its body without the notice members. */
export type ActivityDownloadQuery = Omit<ActivityDownloadBody, 'email_address' | 'notify_via_email' | 'pagination'>;

/** `event_type` of a path, read case-insensitively; undefined when it names no type. */
export function auditEventTypeOf(value: unknown): AuditEventType | undefined {
  if (typeof value !== 'string') return undefined;
  const type = value.toLowerCase();
  return (AuditEventTypes as readonly string[]).includes(type) ? (type as AuditEventType) : undefined;
}

/** The path's event type (lower case: the gateway reads it case-insensitively), reported at `path.event_type`. */
export const eventTypeCheck: MemberCheck = whenAbsent((v, _loc, issues) => {
  if (typeof v !== 'string' || !(AuditEventTypes as readonly string[]).includes(v))
    issues.push({ loc: ['path', 'event_type'], msg: `Input should be ${AuditEventTypes.map((t) => `'${t}'`).join(', ')}`, type: 'enum' });
});

const typedClasses = new Map<string, ClassConstructor<object>>();

/**
 * The class that checks a body of `base` for records of `type`: `show` and `filters` may name the
 * members of that type only (every member when the type is unknown: its 422 is on the path).
 */
export function activityBodyOf<T extends ActivityQueryBody | ActivityDownloadBody>(
  base: ClassConstructor<T>,
  type: AuditEventType | undefined,
): ClassConstructor<T> {
  if (type === undefined) return base;
  const key = `${base.name}:${type}`;
  let cls = typedClasses.get(key);
  if (!cls) {
    const known = activityMembersOf(type);
    const Typed = class extends (base as ClassConstructor<object>) {};
    Object.defineProperty(Typed, 'name', { value: `${base.name}_${type}` });
    Closed()(Typed);
    Check(showCheck(known))(Typed.prototype, 'show');
    Check(filtersCheck(known))(Typed.prototype, 'filters');
    typedClasses.set(key, (cls = Typed));
  }
  return cls as ClassConstructor<T>;
}

/** The query's page size. */
export const activityPageSize = (p: ActivityPagination | null | undefined): number => p?.limit ?? ACTIVITY_LIMITS.defaultPageSize;

/**
 * The `body` of a bus payload that also carries `event_type`: checked by the class of that type,
 * its problems at `['body', ...]` as the gateway reports them (an absent body is `{}`).
 */
export function activityBodyCheck(base: ClassConstructor<ActivityQueryBody> | ClassConstructor<ActivityDownloadBody>): MemberCheck {
  return whenAbsent((v, loc, issues, owner) => {
    const type = (AuditEventTypes as readonly unknown[]).includes(owner['event_type'])
      ? (owner['event_type'] as AuditEventType)
      : undefined;
    issues.push(...collectIssues(activityBodyOf(base as ClassConstructor<ActivityQueryBody>, type), absent(v) ? {} : v, { loc }).issues);
  });
}
