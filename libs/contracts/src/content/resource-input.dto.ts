import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsISO8601, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';
import { MapOf } from '../common/map-of';
import {
  ConversationFieldInputDto,
  FIELD_ID_PATTERN,
  FileFieldInputDto,
  LinkFieldInputDto,
  ProcessingOptionsDto,
  TextFieldInputDto,
} from './field-input.dto';
import { KeyValueFieldInputDto } from './key-value';
import { DatetimeFieldInputDto, KeywordsetFieldInputDto } from './keyword-datetime';

export const RESOURCE_SLUG_PATTERN = /^[a-zA-Z0-9:_-]+$/;
/** Fields of one kind in one resource. */
export const MAX_FIELDS_PER_KIND = 1000;

export class ResourceMetadataInputDto {
  @ApiPropertyOptional() @IsOptional() @IsObject() metadata?: Record<string, string>;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(16) language?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) languages?: string[];
}

export class UserMetadataInputDto {
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  classifications?: Record<string, unknown>[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } }) @IsOptional() @IsArray() @IsObject({ each: true }) relations?: Record<
    string,
    unknown
  >[];
}

export class OriginInputDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) source_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(8192) url?: string;
  @ApiPropertyOptional() @IsOptional() @IsISO8601() created?: string;
  @ApiPropertyOptional() @IsOptional() @IsISO8601() modified?: string;
  @ApiPropertyOptional() @IsOptional() @IsObject() metadata?: Record<string, string>;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) tags?: string[];
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) collaborators?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) filename?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) related?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4096) path?: string;
}

export class ExtraInputDto {
  @ApiPropertyOptional() @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

export class SecurityInputDto {
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  access_groups?: string[];
}

/** Members shared by create and modify. Every member is optional. */
export class ResourceWriteDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2048) title?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(65536) summary?: string;
  @ApiPropertyOptional({ pattern: RESOURCE_SLUG_PATTERN.source })
  @IsOptional()
  @IsString()
  @MaxLength(250)
  @Matches(RESOURCE_SLUG_PATTERN)
  slug?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) icon?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(8192) thumbnail?: string;
  @ApiPropertyOptional({ type: ResourceMetadataInputDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ResourceMetadataInputDto)
  metadata?: ResourceMetadataInputDto;
  @ApiPropertyOptional({ type: UserMetadataInputDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => UserMetadataInputDto)
  usermetadata?: UserMetadataInputDto;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  fieldmetadata?: Record<string, unknown>[];
  @ApiPropertyOptional({ type: OriginInputDto }) @IsOptional() @ValidateNested() @Type(() => OriginInputDto) origin?: OriginInputDto;
  @ApiPropertyOptional({ type: ExtraInputDto }) @IsOptional() @ValidateNested() @Type(() => ExtraInputDto) extra?: ExtraInputDto;
  @ApiPropertyOptional({ type: SecurityInputDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SecurityInputDto)
  security?: SecurityInputDto;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() hidden?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/TextFieldInputDto' } })
  @IsOptional()
  @IsObject()
  @MapOf(TextFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  texts?: Record<string, TextFieldInputDto>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/LinkFieldInputDto' } })
  @IsOptional()
  @IsObject()
  @MapOf(LinkFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  links?: Record<string, LinkFieldInputDto>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/FileFieldInputDto' } })
  @IsOptional()
  @IsObject()
  @MapOf(FileFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  files?: Record<string, FileFieldInputDto>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/ConversationFieldInputDto' } })
  @IsOptional()
  @IsObject()
  @MapOf(ConversationFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  conversations?: Record<string, ConversationFieldInputDto>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/KeyValueFieldInputDto' },
    description: 'key_value fields by id (the id of the key-value schema their values follow, when the KB has one).',
  })
  @IsOptional()
  @IsObject()
  @MapOf(KeyValueFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  key_values?: Record<string, KeyValueFieldInputDto>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/KeywordsetFieldInputDto' },
    description: 'keywordset fields by id.',
  })
  @IsOptional()
  @IsObject()
  @MapOf(KeywordsetFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  keywordsets?: Record<string, KeywordsetFieldInputDto>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/DatetimeFieldInputDto' },
    description: 'datetime fields by id.',
  })
  @IsOptional()
  @IsObject()
  @MapOf(DatetimeFieldInputDto, { keyPattern: FIELD_ID_PATTERN, maxEntries: MAX_FIELDS_PER_KIND })
  datetimes?: Record<string, DatetimeFieldInputDto>;
  @ApiPropertyOptional({ type: ProcessingOptionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProcessingOptionsDto)
  processing_options?: ProcessingOptionsDto;
}

export class CreateResourceDto extends ResourceWriteDto {}
export class ModifyResourceDto extends ResourceWriteDto {}
