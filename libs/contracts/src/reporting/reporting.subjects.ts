import { PredictRemiRequest, type PredictRemiResponse } from '../content/predict.dto';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { Check, checks } from '../common/member-checks';
import { activityBodyCheck, ActivityQueryBody, eventTypeCheck } from './activity-query.dto';
import type { ActivityRecord } from './activity-members';
import { RemiQueryRequest } from './remi-query.dto';
import { VerifyActivityChainRequest, type ActivityChainReport } from './activity-chain.dto';
import {
  ActivityDownloadRef,
  ActivityMonthDownloadRequest,
  RequestActivityDownloadRequest,
  type ActivityCsvChunk,
  type ActivityDownloadDto,
} from './activity-download.dto';
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
 * Query Knowledgebox Activity Logs (spec 4.4) on the bus: the KB, the path's event type (lower
 * case) and the body, checked by the class of that type (`activityBodyOf`) at the gateway and again
 * here; an unknown type is a 422 on `path.event_type`.
 */
export class ActivityQueryRequest {
  @Check(checks.string({ required: true, max: 100 })) kbid!: string;
  @Check(eventTypeCheck) event_type!: AuditEventType;
  @Check(activityBodyCheck(ActivityQueryBody)) body!: ActivityQueryBody;
}

/** The first item says whether more records follow the page (the `has-more` header); then one item per record. */
export type ActivityQueryItem = { type: 'page'; has_more: boolean } | { type: 'record'; record: ActivityRecord };

export class ActivityMonthsRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_type!: string;
}

/** REMi scores of one answer: each 0–5 (docs/remi.md). */
export interface RemiScoresDto {
  answer_relevance: { score: number; reason: string };
  context_relevance: number[];
  groundedness: number[];
}

export interface RemiQueryResponse {
  data: { id: number; question: string; answer: string; remi: RemiScoresDto }[];
  has_more: boolean;
}

/** Aggregated Remi Scores Across Time: query strings as sent, checked by the reporting service. */
export class RemiScoresRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsOptional() @IsString() @MaxLength(100) aggregation?: string;
  @IsOptional() @IsString() @MaxLength(100) from?: string;
  @IsOptional() @IsString() @MaxLength(100) to?: string;
}

export type RemiScoresResponse = {
  timestamp: string;
  metrics: { name: string; min: number | null; max: number | null; average: number | null }[];
}[];

export class RemiEventRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_id!: string;
}

/** One RAG request with its REMi scores and full context. */
export interface RemiEventResponse {
  id: number;
  date: string;
  status: 'SUCCESS' | 'ERROR' | 'NO_CONTEXT';
  question: string;
  rephrased_question: string | null;
  answer: string;
  model: string | null;
  chat_history: unknown[];
  feedback: Record<string, unknown> | null;
  context: { key: string; text: string; context_relevance: number | null }[];
  remi: RemiScoresDto;
  /** Who scored: `llm:<model>` (the KB's generative model as judge), `offline:en-use-lite-2024` or `offline:lexical`. */
  scorer: string;
  /** Why the LLM judge of a KB with a generative provider did not score it (then `scorer` is offline); null otherwise. */
  judge_error: string | null;
}

export const ReportingSubjects = {
  countAuditEvents: rpc<CountAuditEventsRequest, { count: number }>('reporting.audit.count', CountAuditEventsRequest),
  listAuditEvents: rpc<ListAuditEventsRequest, AuditRecordedEvent[]>('reporting.audit.list', ListAuditEventsRequest),
  /** Records of one event type in one month of a KB, filtered and paged (NDJSON at the edge). */
  queryActivity: stream<ActivityQueryRequest, ActivityQueryItem>('reporting.activity.query', ActivityQueryRequest),
  /** Months (YYYY-MM) in which a KB has events of a type: `{downloads: [...]}`. */
  activityMonths: rpc<ActivityMonthsRequest, { downloads: string[] }>('reporting.activity.months', ActivityMonthsRequest),
  /** Records a download request of a query's records (NDJSON or CSV); a background job writes the file. */
  requestActivityDownload: rpc<RequestActivityDownloadRequest, ActivityDownloadDto>(
    'reporting.activity-download.request',
    RequestActivityDownloadRequest,
  ),
  /** A download request with its link once the file is ready. */
  activityDownloadStatus: rpc<ActivityDownloadRef, ActivityDownloadDto>('reporting.activity-download.status', ActivityDownloadRef),
  /** One month of one event type as CSV (the legacy download), streamed. */
  activityMonthCsv: stream<ActivityMonthDownloadRequest, ActivityCsvChunk>(
    'reporting.activity-download.month',
    ActivityMonthDownloadRequest,
  ),
  /** Recomputes a KB's activity chain of one event type and reports the first broken link. */
  verifyActivityChain: rpc<VerifyActivityChainRequest, ActivityChainReport>('reporting.activity-chain.verify', VerifyActivityChainRequest),
  /** Get Usage (spec 4.3): buckets of an account's (or one of its KB's) metered usage. */
  getUsage: rpc<GetUsageRequest, UsageBucketDto[]>('reporting.usage.get', GetUsageRequest),
  /** Every account blocked this month (the gateway's snapshot of what to refuse). */
  listBlocking: rpc<ListBlockingRequest, AccountBlockingDto[]>('reporting.blocking.list', ListBlockingRequest),
  /** An account's blocks changed (a limit reached, raised, or the month turned). */
  blockingChanged: event<AccountBlockingDto>('reporting.blocking.changed', 'USAGE', AccountBlockingDto),
  /** Scored `/ask` requests of a month, filtered by scores, feedback and status, paged. */
  remiQuery: rpc<RemiQueryRequest, RemiQueryResponse>('reporting.remi.query', RemiQueryRequest),
  /** REMi score minimum, maximum and average per time bucket. */
  remiScores: rpc<RemiScoresRequest, RemiScoresResponse>('reporting.remi.scores', RemiScoresRequest),
  /** One scored `/ask` request with its context. */
  remiEvent: rpc<RemiEventRequest, RemiEventResponse>('reporting.remi.event', RemiEventRequest),
  /** The predict API's REMi: the offline scorer on a question, answer and contexts given by the caller. */
  predictRemi: rpc<PredictRemiRequest, PredictRemiResponse>('reporting.predict.remi', PredictRemiRequest),
} as const;
