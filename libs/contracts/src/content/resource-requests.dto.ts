import { Type } from 'class-transformer';
import { WebhookTargetDto } from '../understanding/webhook.dto';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { CreateResourceDto, ModifyResourceDto } from './resource-input.dto';
import { ExtractedOptions, FieldTypes, ShowOptions, type ExtractedOption, type FieldType, type ShowOption } from './resource.dto';

export const UserTypes = ['user', 'nuakey'] as const;
export type UserType = (typeof UserTypes)[number];

/** Who acts, for audit: never a credential. */
export class ActorDto {
  @IsOptional() @IsString() @MaxLength(256) user?: string;
  @IsOptional() @IsString() @MaxLength(64) client_type?: string;
  @IsOptional() @IsString() @MaxLength(128) principal_id?: string;
  /** Activity `user_type` (API-MAP: `user|nuakey`): `nuakey` for API keys, temporal keys and UA keys, `user` for user tokens and PATs. */
  @IsOptional() @IsIn(UserTypes) user_type?: UserType;
  /** The understanding-API (NUA) client whose key made the call, when it was one: usage is metered per key (Get Usage `nua_key_id`). */
  @IsOptional() @IsUUID() nua_key_id?: string;
}

/** A resource named by id or by slug (exactly one). */
export class ResourceRef {
  @IsDefined() @IsString() kbid!: string;
  @IsOptional() @IsString() @MaxLength(128) rid?: string;
  @IsOptional() @IsString() @MaxLength(250) slug?: string;
}

export class CreateResourceRequest {
  @IsDefined() @IsString() kbid!: string;
  /** Set by the edge when it stored the resource's blobs first (uploads); otherwise generated. */
  @IsOptional() @IsString() @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/) rid?: string;
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  /** `x-skip-store`: uploaded files (stored by the edge under `unstoredFileKey`) are deleted once processed. */
  @IsOptional() @IsBoolean() skip_store?: boolean;
  /** Labels recorded on the processing status records of the jobs this write schedules (a push's `labels`). */
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) processing_labels?: string[];
  /** The webhook called when each job this write schedules completes (a push's). */
  @IsOptional() @ValidateNested() @Type(() => WebhookTargetDto) processing_webhook?: WebhookTargetDto;
  /** Set by the edge: the bytes of the inline (base64) files it stored, by field id, as the store wrote them (storage_bytes). */
  @IsOptional() @IsObject() file_sizes?: Record<string, number>;
  @IsDefined() @ValidateNested() @Type(() => CreateResourceDto) body!: CreateResourceDto;
}

export class ModifyResourceRequest extends ResourceRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsOptional() @IsBoolean() skip_store?: boolean;
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) processing_labels?: string[];
  @IsOptional() @ValidateNested() @Type(() => WebhookTargetDto) processing_webhook?: WebhookTargetDto;
  /** See CreateResourceRequest.file_sizes. */
  @IsOptional() @IsObject() file_sizes?: Record<string, number>;
  @IsDefined() @ValidateNested() @Type(() => ModifyResourceDto) body!: ModifyResourceDto;
}

export class DeleteResourceRequest extends ResourceRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
}

export class GetResourceRequest extends ResourceRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsOptional() @IsArray() @ArrayUnique() @IsIn(ShowOptions, { each: true }) show?: ShowOption[];
  @IsOptional() @IsArray() @ArrayUnique() @IsIn(FieldTypes, { each: true }) field_type?: FieldType[];
  @IsOptional() @IsArray() @ArrayUnique() @IsIn(ExtractedOptions, { each: true }) extracted?: ExtractedOption[];
}

export class ListResourcesRequest {
  @IsDefined() @IsString() kbid!: string;
  @IsOptional() @IsInt() @Min(0) @Max(100000) page?: number;
  @IsOptional() @IsInt() @Min(1) @Max(200) size?: number;
  /** Hidden resources are excluded unless asked for. */
  @IsOptional() @IsBoolean() show_hidden?: boolean;
}

export class KbContentRef {
  @IsDefined() @IsString() kbid!: string;
}
