import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { ProcessingWebhookDto } from '../accounts/nua-client.dto';
import { MapOf } from '../common/map-of';
import {
  FIELD_ID_PATTERN,
  LINK_URL_OPTIONS,
  LinkOptionsDto,
  MAX_TEXT_BODY,
  MessageFormats,
  MessageTypes,
  TextFieldInputDto,
} from './field-input.dto';
import { MAX_FIELDS_PER_KIND, RESOURCE_SLUG_PATTERN } from './resource-input.dto';
import { ActorDto } from './resource-requests.dto';

/** A resource id as the reference clients send it: a UUID, with or without dashes. */
export const PUSH_UUID_PATTERN = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

/** A link to fetch and process (NUA `LinkUpload`). */
export class PushLinkDto extends LinkOptionsDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(8192) @IsUrl(LINK_URL_OPTIONS) link!: string;
}

export class PushMessageContentDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(MAX_TEXT_BODY) text?: string;
  @ApiPropertyOptional({ enum: MessageFormats }) @IsOptional() @IsIn(MessageFormats) format?: string;
  /** File tokens of attachments (from Upload Binary File). */
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) attachments?: string[];
}

export class PushMessageDto {
  @ApiProperty()
  @IsDefined()
  @IsString()
  @MaxLength(128)
  @Matches(/^(?!0$)[^/]+$/, { message: 'ident must not be "0" nor contain "/"' })
  ident!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) who?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) to?: string[];
  @ApiPropertyOptional() @IsOptional() @IsISO8601() timestamp?: string;
  @ApiProperty({ type: PushMessageContentDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => PushMessageContentDto)
  content!: PushMessageContentDto;
  @ApiPropertyOptional({ enum: MessageTypes }) @IsOptional() @IsIn(MessageTypes) type?: string;
}

export class PushConversationDto {
  @ApiProperty({ type: [PushMessageDto] })
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(2048)
  @ValidateNested({ each: true })
  @Type(() => PushMessageDto)
  messages!: PushMessageDto[];
}

export class PushProcessingOptionsDto {
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() ml_text?: boolean;
  /** Applies to every field that names no strategy of its own. */
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
}

/** Accepted for compatibility: the KB's own model configuration decides how its content is processed. */
export class PushLearningConfigDto {
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(20) @IsString({ each: true }) semantic_models?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) ner_model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) anonymization_model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) visual_labeling?: string;
}

const fieldMap = (ref: string) => ({ type: 'object', additionalProperties: { $ref: `#/components/schemas/${ref}` } }) as const;

/**
 * "Send Data To Process" (spec 4.5, `POST /api/v1/processing/push`). Every field of the payload
 * becomes a field of the resource `uuid` (or `slug`) in the KB `kbid`, which must belong to the
 * client's account; the resource is created when it does not exist yet.
 */
export class PushPayloadDto {
  /** Required here (the spec allows null): the data is processed into this Knowledge Box. */
  @ApiProperty() @IsDefined() @IsString() @MaxLength(100) kbid!: string;
  @ApiPropertyOptional({ type: String, nullable: true, pattern: PUSH_UUID_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(PUSH_UUID_PATTERN, { message: 'uuid must be a UUID' })
  uuid?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(2048) title?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, pattern: RESOURCE_SLUG_PATTERN.source })
  @IsOptional()
  @IsString()
  @MaxLength(250)
  @Matches(RESOURCE_SLUG_PATTERN)
  slug?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(256) userid?: string | null;
  /** Recorded on the push's processing status records. */
  @ApiPropertyOptional({ type: [String], default: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  labels?: string[];
  @ApiPropertyOptional({ type: Number, nullable: true }) @IsOptional() @IsInt() source?: number | null;
  /** `title` and `summary` of the resource. */
  @ApiPropertyOptional(fieldMap('TextFieldInputDto'))
  @IsOptional()
  @IsObject()
  @MapOf(TextFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: 2 })
  genericfield?: Record<string, TextFieldInputDto>;
  /** File tokens from Upload Binary File, by field id. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) @IsOptional() @IsObject() filefield?: Record<
    string,
    string
  >;
  @ApiPropertyOptional(fieldMap('PushLinkDto'))
  @IsOptional()
  @IsObject()
  @MapOf(PushLinkDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  linkfield?: Record<string, PushLinkDto>;
  @ApiPropertyOptional(fieldMap('TextFieldInputDto'))
  @IsOptional()
  @IsObject()
  @MapOf(TextFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  textfield?: Record<string, TextFieldInputDto>;
  /** Layout fields are not supported; only an empty object is accepted. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() layoutfield?: Record<string, unknown>;
  @ApiPropertyOptional(fieldMap('PushConversationDto'))
  @IsOptional()
  @IsObject()
  @MapOf(PushConversationDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  conversationfield?: Record<string, PushConversationDto>;
  @ApiPropertyOptional({ type: PushProcessingOptionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PushProcessingOptionsDto)
  processing_options?: PushProcessingOptionsDto;
  @ApiPropertyOptional({ type: PushLearningConfigDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PushLearningConfigDto)
  learning_config?: PushLearningConfigDto;
  @ApiPropertyOptional({ type: ProcessingWebhookDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProcessingWebhookDto)
  webhook_config?: ProcessingWebhookDto;
}

/** Bus request of a push: the gateway has checked that `body.kbid` is a KB of the client's account. */
export class ProcessingPushRequest {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsDefined() @ValidateNested() @Type(() => PushPayloadDto) body!: PushPayloadDto;
  /** The client's account: its staged uploads are what the file tokens of `body` name. */
  @IsOptional() @IsString() @MaxLength(100) account_id?: string;
  /** The pushing client (internal id) and its `processing_webhook`, if it has one. */
  @IsOptional() @IsString() @MaxLength(100) client?: string;
  @IsOptional() @ValidateNested() @Type(() => ProcessingWebhookDto) client_webhook?: ProcessingWebhookDto;
}

export class ProcessingPushResponseDto {
  /** The write's sequence number. */
  @ApiProperty() seqid!: number;
  /** The same sequence: one sequence serves every account, so it also orders the account's pushes. */
  @ApiProperty() account_seq!: number;
  @ApiProperty({ example: 'shared' }) queue!: string;
  /** The resource the data was written to. */
  @ApiProperty() uuid!: string;
  /** The processing job of the push's first field (`GET /processing/requests/{processing_id}`); every field has a record of its own. */
  @ApiProperty() processing_id!: string;
}
