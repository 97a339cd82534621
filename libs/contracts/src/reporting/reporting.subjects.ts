import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { rpc } from '../common/bus';
import { AuditEventTypes, type AuditEventType, type AuditRecordedEvent } from '../content/audit.event';

export class CountAuditEventsRequest {
  @IsString() kbid!: string;
  @IsOptional() @IsIn(AuditEventTypes) type?: AuditEventType;
  @IsOptional() @Matches(/^\d{4}-(0[1-9]|1[012])$/) month?: string;
}

export class ListAuditEventsRequest extends CountAuditEventsRequest {}

export const ReportingSubjects = {
  countAuditEvents: rpc<CountAuditEventsRequest, { count: number }>('reporting.audit.count', CountAuditEventsRequest),
  listAuditEvents: rpc<ListAuditEventsRequest, AuditRecordedEvent[]>('reporting.audit.list', ListAuditEventsRequest),
} as const;
