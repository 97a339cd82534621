import { IsString, Matches, MaxLength } from 'class-validator';
import type { AuditEventType } from '../content/audit.event';
import { Check, checks } from '../common/member-checks';
import { activityBodyCheck, ActivityDownloadBody, eventTypeCheck } from './activity-query.dto';

export const ActivityDownloadFormats = ['ndjson', 'csv'] as const;
export type ActivityDownloadFormat = (typeof ActivityDownloadFormats)[number];

/**
 * Request The Preparation Of Knowledgebox Activity Logs Download (spec 4.4) on the bus: the body
 * checked by the class of the event type, as the query's (whether e-mail can be sent only the
 * reporting service knows).
 */
export class RequestActivityDownloadRequest {
  @Check(checks.string({ required: true, max: 100 })) kbid!: string;
  @Check(eventTypeCheck) event_type!: AuditEventType;
  @Check(checks.oneOf(ActivityDownloadFormats)) format!: ActivityDownloadFormat;
  @Check(activityBodyCheck(ActivityDownloadBody)) body!: ActivityDownloadBody;
}

export class ActivityDownloadRef {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) request_id!: string;
}

/** Download Knowledgebox Activity (legacy): one month of one event type as CSV. */
export class ActivityMonthDownloadRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_type!: string;
  @IsString() @Matches(/^\d+-(0[1-9]|1[012])$/) month!: string;
}

/** The download request record (spec 2.7), plus where its preparation stands. */
export interface ActivityDownloadDto {
  request_id: string;
  download_type: 'query';
  download_format: ActivityDownloadFormat;
  event_type: string;
  requested_at: string;
  kb_id: string;
  /** A link to the file, valid for an hour from this answer; null until the file is ready. */
  download_url: string | null;
  status: 'pending' | 'running' | 'done' | 'failed';
  records: number | null;
  size_bytes: number | null;
  error: string | null;
}

/** Chunks of a CSV file, in order. */
export interface ActivityCsvChunk {
  text: string;
}
