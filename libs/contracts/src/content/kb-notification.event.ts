import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, MaxLength, Min, ValidateNested } from 'class-validator';

/** The reference's notification types (API-MAP §3 "Notifications"), in the order a write goes through them. */
export const KbNotificationTypes = ['resource_written', 'resource_processed', 'resource_indexed'] as const;
export type KbNotificationType = (typeof KbNotificationTypes)[number];

export const ResourceOperations = ['created', 'modified', 'deleted'] as const;
export type ResourceOperation = (typeof ResourceOperations)[number];

/**
 * `data` of a notification; which members are present depends on `type`: `operation` and `error`
 * on resource_written, `ingestion_succeeded` and `processing_errors` on resource_processed.
 */
export class KbNotificationDataDto {
  @IsString() @MaxLength(128) resource_uuid!: string;
  @IsString() @MaxLength(4096) resource_title!: string;
  @IsInt() @Min(0) seqid!: number;
  @IsOptional() @IsIn(ResourceOperations) operation?: ResourceOperation;
  @IsOptional() @IsBoolean() error?: boolean;
  @IsOptional() @IsBoolean() ingestion_succeeded?: boolean;
  @IsOptional() @IsBoolean() processing_errors?: boolean;
}

/** One live notification of a KB (`content.kb-notification.emitted.<kbid>`); the gateway streams `{type, data}`. */
export class KbNotificationEvent {
  @IsString() @MaxLength(128) kbid!: string;
  @IsIn(KbNotificationTypes) type!: KbNotificationType;
  @IsObject() @ValidateNested() @Type(() => KbNotificationDataDto) data!: KbNotificationDataDto;
}
