import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { Pagination } from '../common/paging';
import { FIELD_VALUE_CLASSES } from './field-values.dto';

export const FieldTypes = ['text', 'file', 'link', 'conversation', 'key_value', 'keywordset', 'datetime', 'generic'] as const;
export type FieldType = (typeof FieldTypes)[number];
/** Field kinds that hold client content (generic is the resource's own title/summary). */
export const ContentFieldTypes = ['text', 'file', 'link', 'conversation', 'key_value', 'keywordset', 'datetime'] as const;
export type ContentFieldType = (typeof ContentFieldTypes)[number];
/** One-letter codes used in paragraph ids and search results. */
export const FIELD_TYPE_LETTER: Record<FieldType, string> = {
  text: 't',
  file: 'f',
  link: 'u',
  conversation: 'c',
  key_value: 'k',
  // The reference's older letters were `k` keywordset, `d` datetime; `k` is key_value's since (API-MAP 4.3).
  keywordset: 'w',
  datetime: 'd',
  generic: 'a',
};

export const ShowOptions = ['basic', 'origin', 'extra', 'relations', 'values', 'extracted', 'errors', 'security'] as const;
export type ShowOption = (typeof ShowOptions)[number];
export const ExtractedOptions = [
  'text',
  'metadata',
  'shortened_metadata',
  'large_metadata',
  'vectors',
  'link',
  'file',
  'question_answers',
] as const;
export type ExtractedOption = (typeof ExtractedOptions)[number];

export const ResourceStatuses = ['PENDING', 'PROCESSED', 'ERROR', 'EMPTY', 'BLOCKED', 'EXPIRED'] as const;
export type ResourceStatus = (typeof ResourceStatuses)[number];

export class FieldError {
  @ApiProperty() body!: string;
  @ApiProperty() code!: number;
  @ApiProperty() code_str!: string;
  @ApiProperty() created!: string;
}

/** One field as `GET …/{field_type}/{field_id}` shows it (`show` picks the members). */
@ApiExtraModels(...FIELD_VALUE_CLASSES)
export class FieldRecord {
  @ApiPropertyOptional({
    oneOf: FIELD_VALUE_CLASSES.map((c) => ({ $ref: getSchemaPath(c) })),
    description: "The field as written, by the field's type (text, link, file, conversation)",
  })
  /** Read from the stored JSON: the document declares its shape by field type (FieldValue). */
  value?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'What processing extracted, by `extracted` kind',
  })
  extracted?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: FieldError, nullable: true }) error?: FieldError | null;
  @ApiPropertyOptional({ enum: ResourceStatuses }) status?: ResourceStatus;
  @ApiPropertyOptional({ type: [FieldError] }) errors?: FieldError[];
}

export class ResourceCreatedDto {
  @ApiProperty() uuid!: string;
  @ApiProperty() seqid!: number;
  @ApiPropertyOptional() elapsed?: number;
}

export class SeqIdDto {
  @ApiProperty() seqid!: number;
}

@ApiExtraModels(FieldRecord)
export class ResourceDto {
  @ApiProperty() id!: string;
  @ApiPropertyOptional() slug?: string;
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional() summary?: string;
  @ApiPropertyOptional() icon?: string;
  @ApiPropertyOptional() thumbnail?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) usermetadata?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } }) fieldmetadata?: Record<string, unknown>[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) computedmetadata?: Record<string, unknown>;
  @ApiPropertyOptional() created?: string;
  @ApiPropertyOptional() modified?: string;
  @ApiPropertyOptional() last_seqid?: number;
  @ApiPropertyOptional() last_account_seq?: number;
  @ApiPropertyOptional() queue?: string;
  @ApiPropertyOptional() hidden?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) origin?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) extra?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } }) relations?: Record<string, unknown>[];
  @ApiPropertyOptional({
    type: 'object',
    properties: Object.fromEntries(
      ['texts', 'files', 'links', 'conversations', 'key_values', 'keywordsets', 'datetimes'].map((kind) => [
        kind,
        { type: 'object', additionalProperties: { $ref: getSchemaPath(FieldRecord) }, description: 'By field id' },
      ]),
    ),
    description: 'The fields (`show` includes values, extracted or errors), by kind',
  })
  data?: {
    texts?: Record<string, FieldRecord>;
    files?: Record<string, FieldRecord>;
    links?: Record<string, FieldRecord>;
    conversations?: Record<string, FieldRecord>;
    key_values?: Record<string, FieldRecord>;
    keywordsets?: Record<string, FieldRecord>;
    datetimes?: Record<string, FieldRecord>;
  };
  @ApiPropertyOptional({
    type: 'object',
    properties: { access_groups: { type: 'array', items: { type: 'string' } } },
    required: ['access_groups'],
  })
  security?: { access_groups: string[] };
}

export class PaginationDto implements Pagination {
  @ApiProperty() page!: number;
  @ApiProperty() size!: number;
  @ApiProperty() last!: boolean;
}

export class ResourceListDto {
  @ApiProperty({ type: [ResourceDto] }) resources!: ResourceDto[];
  @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
}
