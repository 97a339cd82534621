import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FilterExpressionNode, filterExpressionMember } from './filter-expression.schema';
import { Check, checks, Closed, isPlainObject, type MemberCheck } from '../../common/member-checks';
import {
  ExtractedOptions,
  FieldTypes,
  ShowOptions,
  type ExtractedOption,
  type FieldType,
  type ResourceDto,
  type ShowOption,
} from '../resource.dto';
import { filterExpressionCheck, legacyFiltersCheck, type CatalogFilterExpression, type LegacyFilters } from './filter-expression';
import { REQUEST_LIMITS } from './request-limits';
import { enumListCheck, stringListCheck } from './retrieval.dto';
import { SearchResultList } from './search.dto';
import { searchPayloadOf, type SearchPayload } from './search-payload';

export const CATALOG_STATUSES = ['PENDING', 'PROCESSED', 'ERROR', 'EMPTY', 'BLOCKED', 'EXPIRED'] as const;
export const CATALOG_MATCHES = ['exact', 'words', 'fuzzy', 'starts_with', 'ends_with', 'contains'] as const;
export type CatalogMatch = (typeof CATALOG_MATCHES)[number];

const quoted = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

/** Words of a title query (each one condition). */
export const catalogQueryWords = (q: string): string[] => q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** `query`: words of the title, or `{field: title|slug, match, query}`. */
const catalogQueryCheck: MemberCheck = (q, loc, issues) => {
  if (q === undefined || q === null || q === '') return;
  if (typeof q === 'string') {
    if (q.length > REQUEST_LIMITS.queryChars || catalogQueryWords(q).length > REQUEST_LIMITS.catalogQueryWords) {
      issues.push({
        loc,
        msg: `Input should have at most ${REQUEST_LIMITS.queryChars} characters and ${REQUEST_LIMITS.catalogQueryWords} words`,
        type: 'string_too_long',
      });
    }
    return;
  }
  if (!isPlainObject(q)) return void issues.push({ loc, msg: 'Input should be a string or {field, match, query}', type: 'model_type' });
  const field = q['field'] ?? 'title';
  const match = q['match'] ?? 'exact';
  if (field !== 'title' && field !== 'slug')
    issues.push({ loc: [...loc, 'field'], msg: "Input should be 'title' or 'slug'", type: 'enum' });
  if (!(CATALOG_MATCHES as readonly unknown[]).includes(match))
    issues.push({ loc: [...loc, 'match'], msg: `Input should be ${quoted(CATALOG_MATCHES)}`, type: 'enum' });
  if (typeof q['query'] !== 'string')
    return void issues.push({ loc: [...loc, 'query'], msg: 'Input should be a valid string', type: 'string_type' });
  if (field === 'slug' && match !== 'exact' && match !== 'starts_with')
    issues.push({ loc: [...loc, 'match'], msg: "slug supports only 'exact' and 'starts_with'", type: 'value_error' });
};

const catalogSortCheck: MemberCheck = (s, loc, issues) => {
  if (s === undefined || s === null) return;
  if (!isPlainObject(s)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if (!['created', 'modified', 'title'].includes((s['field'] ?? 'created') as string))
    issues.push({ loc: [...loc, 'field'], msg: "Input should be 'created', 'modified' or 'title'", type: 'enum' });
  if (!['asc', 'desc'].includes((s['order'] ?? 'desc') as string))
    issues.push({ loc: [...loc, 'order'], msg: "Input should be 'asc' or 'desc'", type: 'enum' });
};

/** POST /catalog (and GET, its query in this shape): resources by title or slug, filters, facets, sort and pages. */
@Closed()
@ApiExtraModels(FilterExpressionNode)
export class CatalogRequest {
  @ApiPropertyOptional({
    oneOf: [
      {
        type: 'string',
        maxLength: REQUEST_LIMITS.queryChars,
        description: `Words of the title (at most ${REQUEST_LIMITS.catalogQueryWords}).`,
      },
      {
        type: 'object',
        properties: {
          field: { type: 'string', enum: ['title', 'slug'], default: 'title' },
          match: { type: 'string', enum: [...CATALOG_MATCHES], default: 'exact' },
          query: { type: 'string' },
        },
        required: ['query'],
      },
    ],
  })
  @Check(catalogQueryCheck)
  query?: string | { field?: 'title' | 'slug'; match?: CatalogMatch; query: string };

  @ApiPropertyOptional({
    type: 'object',
    properties: {
      resource: filterExpressionMember(
        'Expression on resources (the filter_expression language without field, keyword, field_mimetype and kind).',
      ),
    },
    additionalProperties: false,
  })
  @Check(filterExpressionCheck('resource'))
  filter_expression?: CatalogFilterExpression;

  @ApiPropertyOptional({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }] },
    maxItems: REQUEST_LIMITS.listItems,
    deprecated: true,
  })
  @Check(legacyFiltersCheck)
  filters?: LegacyFilters;

  @ApiPropertyOptional({ type: [String], deprecated: true }) @Check(stringListCheck()) resource_filters?: string[];
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_creation_start?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_creation_end?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_modification_start?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_modification_end?: string;
  @ApiPropertyOptional({
    type: [String],
    maxItems: REQUEST_LIMITS.facets,
    description: 'Tag prefixes whose tags are counted over the matching resources.',
  })
  @Check(checks.stringList({ maxItems: REQUEST_LIMITS.facets, max: REQUEST_LIMITS.itemChars }))
  faceted?: string[];

  @ApiPropertyOptional({
    type: 'object',
    properties: {
      field: { type: 'string', enum: ['created', 'modified', 'title'], default: 'created' },
      order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
    },
  })
  @Check(catalogSortCheck)
  sort?: { field?: 'created' | 'modified' | 'title'; order?: 'asc' | 'desc' };

  @ApiPropertyOptional({ minimum: 0, maximum: 100_000, default: 0 }) @Check(checks.int(0, 100_000)) page_number?: number;
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 20 }) @Check(checks.int(1, 200)) page_size?: number;
  @ApiPropertyOptional({ description: 'Only hidden (true) or only visible (false) resources.' }) @Check(checks.bool()) hidden?: boolean;
  @ApiPropertyOptional({ default: true }) @Check(checks.bool()) show_hidden?: boolean;
  @ApiPropertyOptional({ enum: CATALOG_STATUSES }) @Check(checks.oneOf(CATALOG_STATUSES)) with_status?: (typeof CATALOG_STATUSES)[number];
  @ApiPropertyOptional({ type: 'object', properties: { groups: { type: 'array', items: { type: 'string' } } } })
  @Check(checks.object())
  security?: { groups?: string[]; access_groups?: string[] };
  @ApiPropertyOptional({ enum: ShowOptions, isArray: true, default: ['basic'] }) @Check(enumListCheck(ShowOptions)) show?: ShowOption[];
  @ApiPropertyOptional({ enum: FieldTypes, isArray: true }) @Check(enumListCheck(FieldTypes)) field_type_filter?: FieldType[];
  @ApiPropertyOptional({ enum: ExtractedOptions, isArray: true, deprecated: true })
  @Check(enumListCheck(ExtractedOptions))
  extracted?: ExtractedOption[];
  @ApiPropertyOptional({ description: 'Accepted without effect.' }) @Check(checks.any()) debug?: boolean;
  @ApiPropertyOptional({ description: 'Accepted without effect.' }) @Check(checks.any()) shards?: string[];
  @ApiPropertyOptional({ description: 'Accepted without effect.' }) @Check(checks.any()) with_duplicates?: boolean;
}

/** CatalogResponse: the page of resources and their title entries. */
export class CatalogResponse {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: 'By resource id, serialized as `show` asks.',
  })
  resources!: Record<string, ResourceDto>;
  @ApiProperty({ type: SearchResultList }) fulltext!: SearchResultList;
  @ApiProperty({ type: [String], nullable: true }) shards!: null;
}

export const CatalogEnvelope = searchPayloadOf(CatalogRequest, 'CatalogEnvelope');
export type CatalogEnvelope = SearchPayload<CatalogRequest>;

/** `prefixes` of /catalog/facets: at most REQUEST_LIMITS.facets `{prefix, depth?}`. */
const prefixesCheck: MemberCheck = (prefixes, loc, issues) => {
  if (!Array.isArray(prefixes)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  if (prefixes.length > REQUEST_LIMITS.facets)
    return void issues.push({ loc, msg: `List should have at most ${REQUEST_LIMITS.facets} items`, type: 'too_long' });
  prefixes.forEach((x, i) => {
    if (!isPlainObject(x) || typeof x['prefix'] !== 'string')
      issues.push({ loc: [...loc, i], msg: 'Input should be {prefix, depth?}', type: 'model_type' });
    else if (x['depth'] !== undefined && x['depth'] !== null && (!Number.isInteger(x['depth']) || (x['depth'] as number) < 0))
      issues.push({ loc: [...loc, i, 'depth'], msg: 'Input should be a non-negative integer', type: 'int_type' });
  });
};

export class CatalogFacetPrefix {
  @ApiProperty({ example: '/l/topic' }) prefix!: string;
  @ApiPropertyOptional({ minimum: 0, description: 'Levels under the prefix to count (all when absent).' }) depth?: number;
}

/** POST /catalog/facets. */
@Closed()
export class CatalogFacetsRequest {
  @ApiProperty({ type: [CatalogFacetPrefix], maxItems: REQUEST_LIMITS.facets })
  @Check(Object.assign(prefixesCheck, { whenAbsent: true }))
  prefixes!: CatalogFacetPrefix[];
}

export class CatalogFacetsResponse {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' }, description: 'Count of resources per tag.' }) facets!: Record<
    string,
    number
  >;
}

export const CatalogFacetsEnvelope = searchPayloadOf(CatalogFacetsRequest, 'CatalogFacetsEnvelope');
export type CatalogFacetsEnvelope = SearchPayload<CatalogFacetsRequest>;
