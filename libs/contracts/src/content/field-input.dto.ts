import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBase64,
  IsBoolean,
  IsDefined,
  IsIn,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export const FIELD_ID_PATTERN = /^[a-zA-Z0-9:_-]+$/;
export const TextFormats = ['PLAIN', 'HTML', 'RST', 'MARKDOWN', 'JSON', 'KEEP_MARKDOWN', 'JSONL', 'PLAIN_BLANKLINE_SPLIT'] as const;
export type TextFormat = (typeof TextFormats)[number];
export const MessageFormats = ['PLAIN', 'HTML', 'RST', 'MARKDOWN', 'KEEP_MARKDOWN', 'JSON'] as const;
export const MessageTypes = ['UNSET', 'QUESTION', 'ANSWER'] as const;
/** Largest text body accepted in one field (characters). */
export const MAX_TEXT_BODY = 10_000_000;

export class TextFieldInputDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(MAX_TEXT_BODY) body!: string;
  @ApiPropertyOptional({ enum: TextFormats, default: 'PLAIN' }) @IsOptional() @IsIn(TextFormats) format?: TextFormat = 'PLAIN';
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) split_strategy?: string;
}

/** How to fetch a link, shared by link fields and the understanding API's pushed links. */
export class LinkOptionsDto {
  @ApiPropertyOptional() @IsOptional() @IsObject() headers?: Record<string, string>;
  @ApiPropertyOptional() @IsOptional() @IsObject() cookies?: Record<string, string>;
  @ApiPropertyOptional() @IsOptional() @IsObject() localstorage?: Record<string, string>;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) css_selector?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) xpath?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(16) language?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) split_strategy?: string;
}

/** An absolute http(s) address (hosts without a TLD allowed: intranets, loopback in tests). */
export const LINK_URL_OPTIONS = { require_protocol: true, protocols: ['http', 'https'], require_tld: false };

export class LinkFieldInputDto extends LinkOptionsDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(8192) @IsUrl(LINK_URL_OPTIONS) uri!: string;
}

export class FileInputDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) filename?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) content_type?: string;
  @ApiPropertyOptional({ description: 'base64 file content' }) @IsOptional() @IsString() @IsBase64() payload?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Matches(/^[a-fA-F0-9]{32}$/) md5?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(8192) uri?: string;
  @ApiPropertyOptional() @IsOptional() @IsObject() extra_headers?: Record<string, string>;
}

export class FileFieldInputDto {
  @ApiProperty({ type: FileInputDto }) @IsDefined() @ValidateNested() @Type(() => FileInputDto) file!: FileInputDto;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) password?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(16) language?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) split_strategy?: string;
}

export class MessageContentDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(MAX_TEXT_BODY) text?: string = '';
  @ApiPropertyOptional({ enum: MessageFormats }) @IsOptional() @IsIn(MessageFormats) format?: string = 'PLAIN';
  @ApiPropertyOptional({ type: [FileInputDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => FileInputDto)
  attachments?: FileInputDto[];
}

export class MessageInputDto {
  @ApiProperty()
  @IsDefined()
  @IsString()
  @MaxLength(128)
  @Matches(/^(?!0$)[^/]+$/, { message: 'ident must not be "0" nor contain "/"' })
  ident!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) who?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) to?: string[];
  @ApiPropertyOptional() @IsOptional() @IsISO8601() timestamp?: string;
  @ApiProperty({ type: MessageContentDto }) @IsDefined() @ValidateNested() @Type(() => MessageContentDto) content!: MessageContentDto;
  @ApiPropertyOptional({ enum: MessageTypes }) @IsOptional() @IsIn(MessageTypes) type?: string;
}

export class ConversationFieldInputDto {
  @ApiProperty({ type: [MessageInputDto] })
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(2048)
  @ValidateNested({ each: true })
  @Type(() => MessageInputDto)
  messages!: MessageInputDto[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) extract_strategy?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) split_strategy?: string;
}

export class ProcessingOptionsDto {
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() ml_text?: boolean = true;
}
