import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Check, checks, Closed, isPlainObject, whenAbsent, type MemberCheck } from '../../common/member-checks';
import type { ResourceDto } from '../resource.dto';
import { RetrievalRequestBase, type FindRelations } from './find.dto';
import { REQUEST_LIMITS } from './request-limits';
import { enumListCheck, graphQueryCheck } from './retrieval.dto';
import { searchPayloadOf, type SearchPayload } from './search-payload';

export const SEARCH_FEATURES = ['fulltext', 'keyword', 'semantic', 'relations'] as const;
export type SearchFeature = (typeof SEARCH_FEATURES)[number];
export const SEARCH_DEFAULT_FEATURES: readonly SearchFeature[] = ['keyword', 'fulltext', 'semantic'];

/** Tag prefixes to count (`/l/topic`, `/t`…), at most REQUEST_LIMITS.facets. */
const facetedCheck: MemberCheck = checks.stringList({ maxItems: REQUEST_LIMITS.facets, max: REQUEST_LIMITS.itemChars });

/** /search sorts by score only (the catalog lists by date or title). */
const searchSortCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if (v['field'] !== undefined && v['field'] !== 'score')
    issues.push({
      loc: [...loc, 'field'],
      msg: 'Not supported: /search sorts by score; use /catalog to list resources by date or title',
      type: 'not_supported',
    });
};

/** POST /search (and GET, its query in this shape): separate paragraph, field and sentence lists. */
@Closed()
export class SearchRequest extends RetrievalRequestBase {
  @ApiPropertyOptional({
    enum: SEARCH_FEATURES,
    isArray: true,
    default: SEARCH_DEFAULT_FEATURES,
    description: 'An empty list means the default.',
  })
  @Check(enumListCheck(SEARCH_FEATURES))
  override features?: SearchFeature[] = undefined;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Refused: /search has no graph feature.' })
  @Check(graphQueryCheck(SEARCH_FEATURES, SEARCH_DEFAULT_FEATURES))
  override graph_query?: Record<string, unknown> = undefined;

  @ApiPropertyOptional({
    type: [String],
    maxItems: REQUEST_LIMITS.facets,
    description: 'Tag prefixes whose tags are counted over the matching paragraphs.',
  })
  @Check(facetedCheck)
  faceted?: string[];
  @ApiPropertyOptional({ minimum: 0, maximum: 1000, default: 0 }) @Check(checks.int(0, 1000)) offset?: number;
  @ApiPropertyOptional({
    type: 'object',
    properties: { field: { type: 'string', enum: ['score'] }, order: { type: 'string' } },
    description: 'Only by score.',
  })
  @Check(searchSortCheck)
  sort?: { field?: 'score'; order?: string };
}

/** One result list of /search: `paragraphs`, `fulltext` or `sentences`. */
export class SearchResultList {
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description:
      'paragraphs: {score, rid, field_type, field, text, labels, position…}; fulltext: {score, rid, field_type, field, labels}; sentences: {score, rid, text, field_type, field, index, position}.',
  })
  results!: Record<string, unknown>[];
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: { type: 'integer' } },
    description: 'Per faceted prefix: count of each tag.',
  })
  facets!: Record<string, Record<string, number>>;
  @ApiPropertyOptional() query?: string;
  @ApiPropertyOptional() total?: number;
  @ApiProperty() page_number!: number;
  @ApiProperty() page_size!: number;
  @ApiPropertyOptional() next_page?: boolean;
  @ApiProperty() min_score!: number;
}

/** KnowledgeboxSearchResults (API-MAP 2.3): a list per feature asked for. */
export class SearchResponse {
  @ApiPropertyOptional({ type: SearchResultList }) paragraphs?: SearchResultList;
  @ApiPropertyOptional({ type: SearchResultList }) fulltext?: SearchResultList;
  @ApiPropertyOptional({ type: SearchResultList }) sentences?: SearchResultList;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) relations?: FindRelations;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: 'The resources of the results, serialized as `show` asks.',
  })
  resources!: Record<string, ResourceDto>;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, nullable: true }) nodes!: null;
  @ApiProperty({ type: [String], nullable: true }) shards!: null;
  @ApiProperty({ type: [String] }) autofilters!: string[];
}

/** GET /resource/{rid}/search (API-MAP 2.3): the /search lists of one resource. */
export interface ResourceSearchResponse {
  sentences: SearchResultList | null;
  paragraphs: SearchResultList | null;
  relations: FindRelations | null;
  nodes: null;
  shards: null;
}

export const SearchRequestEnvelope = searchPayloadOf(SearchRequest, 'SearchRequestEnvelope');
export type SearchRequestEnvelope = SearchPayload<SearchRequest>;

export const SUGGEST_FEATURES = ['paragraph', 'entities'] as const;
export type SuggestFeature = (typeof SUGGEST_FEATURES)[number];

/** The query being typed: required and not blank. */
const suggestQueryCheck: MemberCheck = whenAbsent((v, loc, issues) => {
  if (typeof v !== 'string' || v.trim() === '') issues.push({ loc, msg: 'Field required', type: 'missing' });
  else if (v.length > REQUEST_LIMITS.queryChars)
    issues.push({ loc, msg: `String should have at most ${REQUEST_LIMITS.queryChars} characters`, type: 'string_too_long' });
});

/** POST /suggest (and GET): paragraphs matching the words typed so far, and entities. */
@Closed()
export class SuggestRequest extends RetrievalRequestBase {
  @ApiProperty({ maxLength: REQUEST_LIMITS.queryChars, description: 'The words typed so far; the last one is a prefix.' })
  @Check(suggestQueryCheck)
  override query?: string = undefined;

  @ApiPropertyOptional({ enum: SUGGEST_FEATURES, isArray: true, default: SUGGEST_FEATURES })
  @Check(enumListCheck(SUGGEST_FEATURES))
  override features?: SuggestFeature[] = undefined;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Refused: /suggest has no graph feature.' })
  @Check(graphQueryCheck(['keyword'], ['keyword']))
  override graph_query?: Record<string, unknown> = undefined;

  @ApiPropertyOptional({ description: 'Accepted without effect: /suggest returns at most 10 paragraphs.' })
  @Check(checks.any())
  override top_k?: number = undefined;
}

/** KnowledgeboxSuggestResults (API-MAP 2.5). */
export class SuggestResponse {
  @ApiPropertyOptional({ type: SearchResultList }) paragraphs?: SearchResultList;
  @ApiPropertyOptional({
    type: 'object',
    properties: {
      total: { type: 'integer' },
      entities: { type: 'array', items: { type: 'object', properties: { family: { type: 'string' }, value: { type: 'string' } } } },
    },
  })
  entities?: { total: number; entities: { family: string; value: string }[] };
  @ApiProperty({ type: [String], nullable: true }) shards!: null;
}

export const SuggestEnvelope = searchPayloadOf(SuggestRequest, 'SuggestEnvelope');
export type SuggestEnvelope = SearchPayload<SuggestRequest>;
