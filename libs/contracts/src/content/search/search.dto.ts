import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ResourceDto } from '../resource.dto';
import { Check, checks, Closed, isPlainObject, whenAbsent, type MemberCheck } from '../../common/member-checks';
import { RephraseMember, RephraseModelMember, RephrasePromptMember } from './rephrase-members';
import { FindRelations, RetrievalRequestBase } from './find.dto';
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

  @RephraseMember(
    "Rewrite the query for retrieval with the generative model (`generative_model`, else the KB's); the built-in rewriting without one. The result is `rephrased_query`.",
  )
  override rephrase?: boolean = undefined;
  @RephrasePromptMember()
  override rephrase_prompt?: string = undefined;
  @RephraseModelMember("The model that rephrases (else the KB's).")
  override generative_model?: string = undefined;
}

/** Where a hit is in its field. */
export class SearchHitPosition {
  @ApiProperty() page_number!: number;
  @ApiProperty() index!: number;
  @ApiProperty() start!: number;
  @ApiProperty() end!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'Seconds into the recording (transcripts)' }) start_seconds!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) end_seconds!: number | null;
}

/**
 * One hit of a /search list. `paragraphs`: score, rid, field_type, field, text, labels,
 * start_seconds/end_seconds, position, fuzzy_result; `fulltext`: score, rid, field_type, field,
 * labels; `sentences`: score, rid, text, field_type, field, index, position.
 */
export class SearchHit {
  @ApiProperty() score!: number;
  @ApiProperty() rid!: string;
  @ApiProperty({ description: 'The field type letter (t, f, u, c, a…)' }) field_type!: string;
  @ApiProperty() field!: string;
  @ApiPropertyOptional() text?: string;
  @ApiPropertyOptional({ type: [String] }) labels?: string[];
  @ApiPropertyOptional({ type: [Number] }) start_seconds?: number[];
  @ApiPropertyOptional({ type: [Number] }) end_seconds?: number[];
  @ApiPropertyOptional({ type: SearchHitPosition }) position?: SearchHitPosition;
  @ApiPropertyOptional() fuzzy_result?: boolean;
  @ApiPropertyOptional({ description: 'sentences: the paragraph index' }) index?: string;
}

/** One result list of /search: `paragraphs`, `fulltext` or `sentences`. */
export class SearchResultList {
  @ApiProperty({ type: [SearchHit] })
  results!: SearchHit[];
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

/** ResourceSearchResults: `GET /resource/{rid}/search`, the /search lists of one resource. */
export class ResourceSearchResponse {
  @ApiProperty({ type: SearchResultList, nullable: true }) sentences!: SearchResultList | null;
  @ApiProperty({ type: SearchResultList, nullable: true }) paragraphs!: SearchResultList | null;
  @ApiProperty({ type: FindRelations, nullable: true }) relations!: FindRelations | null;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) nodes!: null;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) shards!: null;
}

/** KnowledgeboxSearchResults (API-MAP 2.3): a list per feature asked for. */
export class SearchResponse {
  @ApiPropertyOptional({ type: SearchResultList }) paragraphs?: SearchResultList;
  @ApiPropertyOptional({ type: SearchResultList }) fulltext?: SearchResultList;
  @ApiPropertyOptional({ type: SearchResultList }) sentences?: SearchResultList;
  @ApiPropertyOptional({ type: FindRelations }) relations?: FindRelations;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(ResourceDto) },
    description: 'The resources of the results, serialized as `show` asks.',
  })
  resources!: Record<string, ResourceDto>;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) nodes!: null;
  @ApiProperty({ type: [String], nullable: true }) shards!: null;
  @ApiProperty({ type: [String] }) autofilters!: string[];
  @ApiPropertyOptional({
    type: 'string',
    description: "With `rephrase: true`: the query retrieval used (the lists' `query` is the caller's). Not in the reference's response.",
  })
  rephrased_query?: string;
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
