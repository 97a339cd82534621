import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Min,
  ValidateNested,
} from 'class-validator';

/** Activity event types (spec 6.1 plus the reference system's newer ask/retrieve/augment). */
export const AuditEventTypes = [
  'visited',
  'modified',
  'deleted',
  'new',
  'search',
  'suggest',
  'indexed',
  'chat',
  'ask',
  'retrieve',
  'augment',
  'started',
  'stopped',
  'processed',
] as const;
export type AuditEventType = (typeof AuditEventTypes)[number];

/**
 * What the activity log stores: the event types above, and `predict` — a call of the predict API
 * (docs/predict.md), stored and sealed once so that its usage counts once (docs/usage.md). Spec
 * 6.1's event types have no such type, so the activity routes (query, download, verify) do not
 * offer it.
 */
export const RecordedEventTypes = [...AuditEventTypes, 'predict'] as const;
export type RecordedEventType = (typeof RecordedEventTypes)[number];

export class AuditRecordedEvent {
  /** Unique per event: consumers deduplicate on it. */
  @IsString() event_id!: string;
  @IsString() kbid!: string;
  @IsIn(RecordedEventTypes) type!: RecordedEventType;
  @IsISO8601() date!: string;
  @IsOptional() @IsString() user_id?: string;
  @IsOptional() @IsString() user_type?: string;
  @IsOptional() @IsString() client_type?: string;
  @IsOptional() @IsInt() @Min(0) total_duration?: number;
  @IsOptional() @IsString() resource_id?: string;
  @IsOptional() @IsObject() audit_metadata?: Record<string, unknown>;
  /** search / suggest / chat details: query, filters, features, resources_count, and for chat the question, answer, context… */
  @IsOptional() @IsObject() details?: Record<string, unknown>;
  /** The understanding-API (NUA) client whose key caused the event (a push, the processing of a pushed field): usage per key. */
  @IsOptional() @IsUUID() nua_key_id?: string;
}

/** Most events in one batch message (a publisher sends at most this many together). */
export const AUDIT_BATCH_MAX = 256;

/**
 * Activity events published together in one message (reads, searches, suggestions, answers: the
 * events of requests, batched by content). One message instead of one per event: over NATS one
 * JetStream publish and one acknowledgement for the batch, in the embedded queue one job. Each
 * event keeps its own id: a consumer stores each once, whichever way it came.
 */
export class AuditBatchEvent {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(AUDIT_BATCH_MAX)
  @ValidateNested({ each: true })
  @Type(() => AuditRecordedEvent)
  events!: AuditRecordedEvent[];
}
