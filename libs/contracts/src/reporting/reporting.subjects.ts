import { IsIn, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { event, rpc, stream } from '../common/bus';
import { AccountBlockingDto, GetUsageRequest, ListBlockingRequest, type UsageBucketDto } from './usage.dto';
import { AuditEventTypes, type AuditEventType, type AuditRecordedEvent } from '../content/audit.event';

export class CountAuditEventsRequest {
  @IsString() kbid!: string;
  @IsOptional() @IsIn(AuditEventTypes) type?: AuditEventType;
  @IsOptional() @Matches(/^\d{4}-(0[1-9]|1[012])$/) month?: string;
}

export class ListAuditEventsRequest extends CountAuditEventsRequest {}

/**
 * Query Knowledgebox Activity Logs (spec 4.4): the body travels as sent and is read by the reporting
 * service, which answers every invalid member at once (422). `event_type` is the path segment, also
 * checked there (an unknown type is a 422 on `path.event_type`).
 */
export class ActivityQueryRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_type!: string;
  @IsOptional() @IsObject() body?: Record<string, unknown>;
}

/** The first item says whether more records follow the page (the `has-more` header); then one item per record. */
export type ActivityQueryItem = { type: 'page'; has_more: boolean } | { type: 'record'; record: Record<string, unknown> };

export class ActivityMonthsRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_type!: string;
}

export const ReportingSubjects = {
  countAuditEvents: rpc<CountAuditEventsRequest, { count: number }>('reporting.audit.count', CountAuditEventsRequest),
  listAuditEvents: rpc<ListAuditEventsRequest, AuditRecordedEvent[]>('reporting.audit.list', ListAuditEventsRequest),
  /** Records of one event type in one month of a KB, filtered and paged (NDJSON at the edge). */
  queryActivity: stream<ActivityQueryRequest, ActivityQueryItem>('reporting.activity.query', ActivityQueryRequest),
  /** Months (YYYY-MM) in which a KB has events of a type: `{downloads: [...]}`. */
  activityMonths: rpc<ActivityMonthsRequest, { downloads: string[] }>('reporting.activity.months', ActivityMonthsRequest),
  /** Get Usage (spec 4.3): buckets of an account's (or one of its KB's) metered usage. */
  getUsage: rpc<GetUsageRequest, UsageBucketDto[]>('reporting.usage.get', GetUsageRequest),
  /** Every account blocked this month (the gateway's snapshot of what to refuse). */
  listBlocking: rpc<ListBlockingRequest, AccountBlockingDto[]>('reporting.blocking.list', ListBlockingRequest),
  /** An account's blocks changed (a limit reached, raised, or the month turned). */
  blockingChanged: event<AccountBlockingDto>('reporting.blocking.changed', 'USAGE', AccountBlockingDto),
} as const;
