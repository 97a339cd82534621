import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsString, Min, ValidateNested } from 'class-validator';
import { ContentFieldTypes, type ContentFieldType } from './resource.dto';

export class ReindexedFieldDto {
  @IsIn(ContentFieldTypes) field_type!: ContentFieldType;
  @IsString() field_id!: string;
  /** Write whose extracted data the field holds (or, when reprocessed, the new write). */
  @IsInt() @Min(0) seqid!: number;
  /** PROCESSED fields have `extracted` stored in content; PENDING ones are being (re)processed. */
  @IsString() status!: string;
}

/**
 * A resource was asked to be reindexed. The search index rebuilds the resource's rows from the
 * fields' stored `extracted` data (vectors included). With `reindex_vectors`, every field listed
 * was also sent to processing again; its new result will be indexed as any processing result is.
 * Consumers must be idempotent: `event_id` is unique per request, redeliveries repeat it.
 */
export class ResourceReindexedEvent {
  @IsString() event_id!: string;
  @IsString() kbid!: string;
  @IsString() rid!: string;
  @IsBoolean() reindex_vectors!: boolean;
  @IsISO8601() date!: string;
  @IsArray() @ValidateNested({ each: true }) @Type(() => ReindexedFieldDto) fields!: ReindexedFieldDto[];
}
