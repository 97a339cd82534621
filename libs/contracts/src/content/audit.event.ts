import { IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Min } from 'class-validator';

/** Activity event types (spec 6.1 plus the reference system's newer ask/retrieve/augment). */
export const AuditEventTypes = [
  'visited', 'modified', 'deleted', 'new', 'search', 'suggest', 'indexed', 'chat', 'ask', 'retrieve', 'augment', 'started', 'stopped', 'processed',
] as const;
export type AuditEventType = (typeof AuditEventTypes)[number];

export class AuditRecordedEvent {
  /** Unique per event: consumers deduplicate on it. */
  @IsString() event_id!: string;
  @IsString() kbid!: string;
  @IsIn(AuditEventTypes) type!: AuditEventType;
  @IsISO8601() date!: string;
  @IsOptional() @IsString() user_id?: string;
  @IsOptional() @IsString() user_type?: string;
  @IsOptional() @IsString() client_type?: string;
  @IsOptional() @IsInt() @Min(0) total_duration?: number;
  @IsOptional() @IsString() resource_id?: string;
  @IsOptional() @IsObject() audit_metadata?: Record<string, unknown>;
  /** search / suggest / chat details: query, filters, features, resources_count, and for chat the question, answer, context… */
  @IsOptional() @IsObject() details?: Record<string, unknown>;
}
