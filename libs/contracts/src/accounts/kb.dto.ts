import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { KbRoles, type KbRole } from '../common/principal';
import { IsArray, IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

export const KB_SLUG_PATTERN = /^[a-zA-Z0-9:_-]+$/;
export const KbStates = ['PUBLISHED', 'PRIVATE'] as const;
export type KbState = (typeof KbStates)[number];

export class CreateKnowledgeBoxDto {
  @ApiPropertyOptional({ pattern: KB_SLUG_PATTERN.source })
  @IsOptional()
  @IsString()
  @MaxLength(250)
  @Matches(KB_SLUG_PATTERN)
  slug?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4096) description?: string;
  /** Deprecated: accepted and ignored. */
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() sentence_embedder?: unknown;
  /** Deprecated: accepted and ignored. */
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() anonymization?: unknown;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() learning_configuration?: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) allowed_origins?: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() external_index_provider?: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() search_configs?: Record<string, unknown>;
}

export class ModifyKnowledgeBoxDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) @Matches(KB_SLUG_PATTERN) slug?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional({ enum: KbStates }) @IsOptional() @IsIn(KbStates) state?: KbState;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4096) description?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) allowed_origins?: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() search_configs?: Record<string, unknown>;
}

export class KnowledgeBoxDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() account_id!: string;
  @ApiProperty() zone!: string;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ enum: KbStates }) state!: KbState;
  @ApiProperty() created!: string;
  @ApiProperty() admin!: boolean;
  @ApiProperty() contrib!: boolean;
  @ApiProperty({ type: [String] }) allowed_origins!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) search_configs!: Record<string, unknown>;
  @ApiPropertyOptional({ nullable: true, type: String }) external_index_provider!: string | null;
}

export class KnowledgeBoxSummaryDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() zone!: string;
  @ApiProperty() title!: string;
  @ApiProperty({ enum: KbStates }) state!: KbState;
  @ApiProperty() description!: string;
  @ApiProperty() role_on_kb!: string;
  @ApiProperty({ type: [String] }) allowed_origins!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) search_configs!: Record<string, unknown>;
  @ApiPropertyOptional({ nullable: true, type: String }) external_index_provider!: string | null;
}

export class IdDto {
  @ApiProperty() id!: string;
}

/** Bus requests: the gateway adds who is acting; the body is the HTTP body as validated. */
export class AccountRef {
  @IsDefined() @IsString() account_id!: string;
}

export class KbRef extends AccountRef {
  @IsDefined() @IsString() kb_id!: string;
}

export class GetKbRequest extends KbRef {
  /** The caller's role on the KB, to fill `admin` and `contrib`. */
  @IsOptional() @IsIn(KbRoles) caller_role?: KbRole;
}

export class CreateKbRequest extends AccountRef {
  @IsOptional() @IsString() actor_user_id?: string;
  @IsDefined() @ValidateNested() @Type(() => CreateKnowledgeBoxDto) body!: CreateKnowledgeBoxDto;
}

export class ModifyKbRequest extends KbRef {
  @IsDefined() @ValidateNested() @Type(() => ModifyKnowledgeBoxDto) body!: ModifyKnowledgeBoxDto;
}

export class ListKbsRequest extends AccountRef {
  /** The caller's user id: `role_on_kb` is that user's role. */
  @IsOptional() @IsString() user_id?: string;
  /** For API keys: only the key's own KB is listed. */
  @IsOptional() @IsString() only_kb_id?: string;
  /** Every KB of the account, whoever asks: for an understanding-API client acting for its account (set by the gateway, never by a caller). */
  @IsOptional() @IsBoolean() whole_account?: boolean;
}

export class KbEvent {
  @IsString() account_id!: string;
  @IsString() kb_id!: string;
}

export class KbCorsRequest {
  @IsDefined() @IsString() kb_id!: string;
}

export class KbCorsDto {
  kb_found!: boolean;
  allowed_origins!: string[];
}

export class AccountUploadLimitsRequest {
  @IsDefined() @IsString() account_id!: string;
}

export class KbUploadLimitsDto {
  upload_limit_max_media_file_size!: number;
  upload_limit_max_non_media_file_size!: number;
}
