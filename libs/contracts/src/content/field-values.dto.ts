import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MessageInputDto, TextFormats, type TextFormat } from './field-input.dto';

const MASKED_MAP = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Names and values; stored secrets are masked.',
} as const;

/** A text field's value as it reads back. */
export class TextFieldValue {
  @ApiProperty() body!: string;
  @ApiProperty({ enum: TextFormats }) format!: TextFormat;
  @ApiProperty({ description: 'MD5 of the body.' }) md5!: string;
  @ApiPropertyOptional() extract_strategy?: string;
  @ApiPropertyOptional() split_strategy?: string;
}

/** A link field's value as it reads back (headers, cookies and local storage masked). */
export class LinkFieldValue {
  @ApiProperty({ format: 'date-time' }) added!: string;
  @ApiProperty() uri!: string;
  @ApiProperty(MASKED_MAP) headers!: Record<string, string>;
  @ApiProperty(MASKED_MAP) cookies!: Record<string, string>;
  @ApiProperty(MASKED_MAP) localstorage!: Record<string, string>;
  @ApiPropertyOptional() css_selector?: string;
  @ApiPropertyOptional() xpath?: string;
  @ApiPropertyOptional() language?: string;
  @ApiPropertyOptional() extract_strategy?: string;
  @ApiPropertyOptional() split_strategy?: string;
}

/** The stored file of a file field. */
export class StoredFileValue {
  @ApiPropertyOptional({ description: '`blob:` for a file this service stores, else the external address.' }) uri?: string;
  @ApiPropertyOptional() filename?: string;
  @ApiPropertyOptional() content_type?: string;
  @ApiPropertyOptional() md5?: string;
  @ApiPropertyOptional(MASKED_MAP) extra_headers?: Record<string, string>;
}

/** A file field's value as it reads back (its password and fetch headers masked). */
export class FileFieldValue {
  @ApiProperty({ format: 'date-time' }) added!: string;
  @ApiProperty({ type: () => StoredFileValue }) file!: StoredFileValue;
  @ApiPropertyOptional() language?: string;
  @ApiPropertyOptional({ description: 'Masked.' }) password?: string;
  @ApiProperty({ description: 'Whether the file lives outside this service.' }) external!: boolean;
  @ApiPropertyOptional() extract_strategy?: string;
  @ApiPropertyOptional() split_strategy?: string;
}

/** A conversation field's value: its size, and on Get Resource Field one page of its messages. */
export class ConversationFieldValue {
  @ApiProperty({ type: 'integer' }) pages!: number;
  @ApiProperty({ type: 'integer', description: 'Messages per page (on Get Resource Field), or all of them.' }) size!: number;
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiPropertyOptional({ type: 'integer', description: 'Get Resource Field: the page shown.' }) page?: number;
  @ApiPropertyOptional({ type: () => [MessageInputDto], description: 'Get Resource Field: the messages of the page.' })
  messages?: MessageInputDto[];
  @ApiPropertyOptional() extract_strategy?: string;
}

export const FIELD_VALUE_CLASSES = [TextFieldValue, LinkFieldValue, FileFieldValue, ConversationFieldValue] as const;
export type FieldValue = TextFieldValue | LinkFieldValue | FileFieldValue | ConversationFieldValue;
