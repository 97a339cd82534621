import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { ExtractedOptions, FieldTypes, ShowOptions } from '../resource.dto';
import { CATALOG_MATCHES, CATALOG_STATUSES } from './catalog.dto';
import { FIND_FEATURES } from './find.dto';
import { REQUEST_LIMITS } from './request-limits';
import { RERANKER_NAMES } from './retrieval.dto';
import { SEARCH_FEATURES, SUGGEST_FEATURES } from './search.dto';

/**
 * The GET forms of /find, /search, /suggest and /catalog: the POST body's members as query
 * parameters (lists repeat or are comma-separated, `filter_expression` is JSON, `field_type` is
 * `field_type_filter`, `security_groups` is `security.groups`, `min_score_semantic`/`min_score_bm25`
 * are `min_score`, `sort_field`/`sort_order` are `sort`). The gateway turns them into the body and
 * validates it with the POST DTO, so these classes only document the parameters.
 */
type Spec = [name: string, options: ApiPropertyOptions];

const list = (description: string, items: ApiPropertyOptions['items'] = { type: 'string' }): ApiPropertyOptions =>
  ({ type: 'array', items, description }) as ApiPropertyOptions;
const enumList = (values: readonly string[], description = 'Repeat the parameter or separate with commas.'): ApiPropertyOptions =>
  list(description, { type: 'string', enum: [...values] });

const COMMON: Spec[] = [
  ['filter_expression', { type: 'string', description: "The POST body's filter_expression as JSON." }],
  ['filters', list('Legacy tag filters (repeat the parameter).')],
  ['resource_filters', list('Resource ids.')],
  ['range_creation_start', { type: 'string', format: 'date-time' }],
  ['range_creation_end', { type: 'string', format: 'date-time' }],
  ['range_modification_start', { type: 'string', format: 'date-time' }],
  ['range_modification_end', { type: 'string', format: 'date-time' }],
  ['show', enumList(ShowOptions)],
  ['field_type', enumList(FieldTypes, 'The field types to serialize (field_type_filter of the body).')],
  ['extracted', enumList(ExtractedOptions)],
];

const RETRIEVAL: Spec[] = [
  ['query', { type: 'string', maxLength: REQUEST_LIMITS.queryChars }],
  ['top_k', { type: 'integer', minimum: 1, maximum: 200 }],
  ['min_score', { type: 'number', description: 'Semantic threshold (same as min_score_semantic).' }],
  ['min_score_semantic', { type: 'number' }],
  ['min_score_bm25', { type: 'number', minimum: 0 }],
  ['vectorset', { type: 'string' }],
  ['rank_fusion', { type: 'string', enum: ['rrf', 'legacy'] }],
  ['reranker', { type: 'string', enum: [...RERANKER_NAMES] }],
  ['with_duplicates', { type: 'boolean' }],
  ['with_synonyms', { type: 'boolean' }],
  ['highlight', { type: 'boolean' }],
  ['debug', { type: 'boolean' }],
  ['show_hidden', { type: 'boolean' }],
  ['security_groups', list('Security groups (repeat the parameter).')],
  ['fields', list('<type letter>/<field id>, e.g. t/body.')],
  ['keyword_filters', list('Keywords every result must hold.')],
  ...COMMON,
];

function queryClass(name: string, specs: Spec[]): new () => object {
  const cls = class {};
  Object.defineProperty(cls, 'name', { value: name });
  for (const [property, options] of specs) ApiPropertyOptional(options)(cls.prototype, property);
  return cls;
}

export const FindQueryParams = queryClass('FindQueryParams', [
  ['features', enumList(FIND_FEATURES)],
  ['search_configuration', { type: 'string', description: 'A saved search configuration of kind find (docs/kb-configuration.md).' }],
  ...RETRIEVAL,
]);
export const SearchQueryParams = queryClass('SearchQueryParams', [
  ['features', enumList(SEARCH_FEATURES)],
  ...RETRIEVAL,
  ['faceted', list('Tag prefixes to count.')],
  ['offset', { type: 'integer', minimum: 0, maximum: 1000 }],
  ['sort_field', { type: 'string', enum: ['score'] }],
  ['rephrase', { type: 'boolean', description: 'Rewrite the query for retrieval (the result is rephrased_query).' }],
  ['rephrase_prompt', { type: 'string', description: 'The rephrasing instructions; must contain {question}.' }],
  ['generative_model', { type: 'string', description: "The model that rephrases (else the KB's)." }],
]);
export const SuggestQueryParams = queryClass('SuggestQueryParams', [['features', enumList(SUGGEST_FEATURES)], ...RETRIEVAL]);
export const CatalogQueryParams = queryClass('CatalogQueryParams', [
  ['query', { type: 'string', description: `Words of the title (match: ${CATALOG_MATCHES.join(', ')} only in the POST body).` }],
  ...COMMON,
  ['faceted', list('Tag prefixes to count.')],
  ['sort_field', { type: 'string', enum: ['created', 'modified', 'title'] }],
  ['sort_order', { type: 'string', enum: ['asc', 'desc'] }],
  ['page_number', { type: 'integer', minimum: 0, maximum: 100_000 }],
  ['page_size', { type: 'integer', minimum: 1, maximum: 200 }],
  ['hidden', { type: 'boolean' }],
  ['show_hidden', { type: 'boolean' }],
  ['with_status', { type: 'string', enum: [...CATALOG_STATUSES] }],
]);
