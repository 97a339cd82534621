import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsArray, IsDefined, IsIn, IsISO8601, IsOptional, IsString, IsUUID } from 'class-validator';

/** Buckets of Get Usage (spec 4.3), truncated in UTC. */
export const UsageAggregations = ['hour', 'day', 'week', 'month', 'quarter', 'year', 'millennium'] as const;
export type UsageAggregation = (typeof UsageAggregations)[number];

/**
 * Metrics of Get Usage. Counters add up what happened in a bucket; `resources`, `paragraphs_stored`
 * and `storage_bytes` are net changes in the bucket (stored amounts rise and fall).
 */
export const UsageMetrics = [
  'paragraphs_processed',
  'chars_processed',
  'docs_no_media_processed',
  'media_seconds_processed',
  'non_media_files_processed',
  'paragraphs_stored',
  'searches_performed',
  'answers_generated',
  'pre_processing_time',
  'storage_bytes',
  'resources',
  // The predict API (docs/predict.md): every call, the generators' tokens, and the calls of
  // understanding-API keys that stand for a self-hosted deployment's searches and answers.
  'predictions_performed',
  'ai_tokens_used',
  'self_hosted_searches_performed',
  'self_hosted_answers_generated',
] as const;
export type UsageMetric = (typeof UsageMetrics)[number];

/** Features an exhausted limit blocks (the account's `blocked_features`). */
export const BlockableFeatures = ['search', 'ask', 'processing', 'storage', 'self_hosted_search', 'self_hosted_ask'] as const;
export type BlockableFeature = (typeof BlockableFeatures)[number];

/** Get Usage over the bus: the gateway has checked the caller and parsed the query. */
export class GetUsageRequest {
  @IsDefined() @IsUUID() account_id!: string;
  /** A KB of the account (checked by reporting: another's is 404), or none: the account's usage. */
  @IsOptional() @IsUUID() kb_id?: string;
  @IsDefined() @IsString() from!: string;
  @IsDefined() @IsString() to!: string;
  @IsDefined() @IsIn(UsageAggregations) aggregation!: UsageAggregation;
  /** Only what this understanding-API (NUA) key caused: its pushes and the processing of what it pushed. */
  @IsOptional() @IsUUID() nua_key_id?: string;
}

export interface UsageMetricDto {
  name: UsageMetric;
  value: number;
  details: unknown[];
}

export interface UsageBucketDto {
  timestamp: string;
  metrics: UsageMetricDto[];
}

/** An account's blocks in one UTC month: features blocked account-wide, and per KB (storage limits). */
export class AccountBlockingDto {
  @IsString() account_id!: string;
  /** `YYYY-MM`: a block of another month is void (the month turned). */
  @IsString() month!: string;
  @IsArray() @IsString({ each: true }) features!: string[];
  /** KB id → features blocked on that KB only. */
  @IsOptional() kbs?: Record<string, string[]>;
  /** `unblocked` or `quota`. */
  @IsString() blocking_state!: string;
}

export class ListBlockingRequest {}

/** The query of Get Usage at the edge (spec 4.3; API-MAP §1.3: `aggregation` defaults to `millennium`, `to` to now). */
export class GetUsageQueryDto {
  @ApiPropertyOptional({ enum: UsageAggregations, default: 'millennium' })
  @IsOptional()
  @IsIn(UsageAggregations)
  aggregation?: UsageAggregation;
  /** `knowledgebox=` (empty, as a client sending null does) is the whole account. */
  @ApiPropertyOptional({ nullable: true, description: 'A Knowledge Box of the account (id); none or empty: the whole account' })
  @Transform(({ value }: { value: unknown }) => (value === '' || value === 'null' ? undefined : value))
  @IsOptional()
  @IsUUID()
  knowledgebox?: string;
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "Only the usage an understanding-API (NUA) key caused: its pushes and the processing of the fields it pushed (the client's internal id)",
  })
  @IsOptional()
  @IsUUID()
  nua_key_id?: string;
  @ApiProperty({ format: 'date-time' }) @IsDefined() @IsISO8601({ strict: true }) from!: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Default: now' }) @IsOptional() @IsISO8601({ strict: true }) to?: string;
}

export class UsageMetricEntryDto {
  @ApiProperty({ enum: UsageMetrics }) name!: string;
  @ApiProperty() value!: number;
  @ApiProperty({ type: 'array', items: { type: 'object' } }) details!: unknown[];
}

export class UsageBucketEntryDto {
  @ApiProperty({ format: 'date-time' }) timestamp!: string;
  @ApiProperty({ type: [UsageMetricEntryDto] }) metrics!: UsageMetricEntryDto[];
}
