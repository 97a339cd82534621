import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { ClassConstructor } from 'class-transformer';
import { collectIssues } from '../common/validation';
import { AuditEventTypes, type AuditEventType } from '../content/audit.event';
import { Check, Closed, whenAbsent, type MemberCheck } from '../common/member-checks';
import { activityMembersOf } from './activity-members';
import { absent, ACTIVITY_LIMITS, filtersCheck, paginationCheck, showCheck, YEAR_MONTH, yearMonthCheck } from './activity-query.checks';

export {
  ACTIVITY_LIMITS,
  ACTIVITY_OPERATORS,
  ACTIVITY_PATTERNS,
  activityOperatorsOf,
  type ActivityOperator,
} from './activity-query.checks';

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

  @ApiProperty({ type: () => ActivityFilters, description: "As the query's." })
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
