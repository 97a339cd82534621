import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  FIELD_ID_PATTERN,
  MessageInputDto,
  type ConversationFieldInputDto,
  type FileFieldInputDto,
  type LinkFieldInputDto,
  type TextFieldInputDto,
} from './field-input.dto';
import type { KeyValueFieldInputDto } from './key-value';
import type { DatetimeFieldInputDto, KeywordsetFieldInputDto } from './keyword-datetime';
import type { CreateResourceDto } from './resource-input.dto';
import { ActorDto, ResourceRef } from './resource-requests.dto';
import { ContentFieldTypes, ExtractedOptions, type ContentFieldType, type ExtractedOption } from './resource.dto';

export class FieldRef extends ResourceRef {
  @IsIn(ContentFieldTypes) field_type!: ContentFieldType;
  @IsDefined() @IsString() @MaxLength(250) @Matches(FIELD_ID_PATTERN) field_id!: string;
}

/** A field's value as its type's input DTO declares it. */
export type FieldInputDto =
  | TextFieldInputDto
  | LinkFieldInputDto
  | FileFieldInputDto
  | ConversationFieldInputDto
  | KeyValueFieldInputDto
  | KeywordsetFieldInputDto
  | DatetimeFieldInputDto;

/** Sets one field; `value` was validated by the edge against the field type's input DTO. */
export class PutFieldRequest extends FieldRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  /** `x-skip-store`: see CreateResourceRequest.skip_store. */
  @IsOptional() @IsBoolean() skip_store?: boolean;
  @IsDefined() @IsObject() value!: FieldInputDto;
  /** Set by the edge for a file whose inline (base64) bytes it stored: their size, as the store wrote them (storage_bytes). */
  @IsOptional() @IsInt() @Min(0) file_size?: number;
}

export class GetFieldRequest extends FieldRef {
  @IsOptional() @IsArray() @IsIn(['value', 'extracted', 'error'], { each: true }) show?: ('value' | 'extracted' | 'error')[];
  @IsOptional() @IsArray() @IsIn(ExtractedOptions, { each: true }) extracted?: ExtractedOption[];
  /** Conversation page: 'first', 'last' or a 1-based number. */
  @IsOptional() @IsString() page?: string;
}

export class DeleteFieldRequest extends FieldRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
}

export class AppendMessagesRequest extends FieldRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsArray() @ArrayMaxSize(2048) @ValidateNested({ each: true }) @Type(() => MessageInputDto) messages!: MessageInputDto[];
}

export class DeleteMessageRequest extends FieldRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsDefined() @IsString() @MaxLength(128) ident!: string;
}

export class ReprocessRequest extends ResourceRef {
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsOptional() @IsIn(ContentFieldTypes) field_type?: ContentFieldType;
  @IsOptional() @IsString() field_id?: string;
  @IsOptional() @IsBoolean() reset_title?: boolean;
}

export class UploadedFileDto {
  /** `blob:<key>` of the stored upload. */
  @IsDefined() @IsString() uri!: string;
  @IsOptional() @IsString() @MaxLength(1024) filename?: string;
  @IsDefined() @IsString() @MaxLength(255) content_type!: string;
  @IsInt() @Min(0) size!: number;
  @IsDefined() @IsString() @Matches(/^[a-f0-9]{32}$/) md5!: string;
}

/** A file the edge has streamed to the blob store: becomes a file field, of a new resource when `rid` is new. */
export class RegisterUploadRequest {
  @IsDefined() @IsString() kbid!: string;
  @IsDefined() @IsString() rid!: string;
  @IsDefined() @IsBoolean() create!: boolean;
  @IsDefined() @IsString() @MaxLength(250) @Matches(FIELD_ID_PATTERN) field_id!: string;
  @IsOptional() @ValidateNested() @Type(() => ActorDto) actor?: ActorDto;
  @IsDefined() @ValidateNested() @Type(() => UploadedFileDto) file!: UploadedFileDto;
  @IsOptional() @IsString() @MaxLength(1024) password?: string;
  @IsOptional() @IsString() @MaxLength(16) language?: string;
  @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
  @IsOptional() @IsString() @MaxLength(128) split_strategy?: string;
  /** `x-skip-store`: the file (stored under `unstoredFileKey`) is deleted once processed. */
  @IsOptional() @IsBoolean() skip_store?: boolean;
  /** Members of the new resource (TUS creation bodies carry them). */
  @IsOptional() @IsObject() resource?: CreateResourceDto;
}

export class Md5Request {
  @IsDefined() @IsString() kbid!: string;
  @IsDefined() @IsString() @Matches(/^[a-f0-9]{32}$/) md5!: string;
}
