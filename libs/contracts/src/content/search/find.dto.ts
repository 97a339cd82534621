import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { searchPayloadOf, type SearchPayload } from './search-payload';
import { Check, checks, Closed } from '../../common/member-checks';
import {
  ExtractedOptions,
  FieldTypes,
  ResourceDto,
  ShowOptions,
  type ExtractedOption,
  type FieldType,
  type ShowOption,
} from '../resource.dto';
import { fieldsCheck, filterExpressionCheck, legacyFiltersCheck, type FilterExpression, type LegacyFilters } from './filter-expression';
import { FilterExpressionNode, filterExpressionMember, KvFilterExpressionNode } from './filter-expression.schema';
import { REQUEST_LIMITS } from './request-limits';
import { RELATION_TYPES, type RelationType } from './graph-query';
import { configNameCheck } from './config-name';
import { RephraseMember, RephraseModelMember, RephrasePromptMember } from './rephrase-members';
import {
  auditMetadataCheck,
  enumListCheck,
  graphQueryCheck,
  minScoreCheck,
  rankFusionCheck,
  RERANKER_NAMES,
  rerankerCheck,
  type RerankerName,
  securityCheck,
  stringListCheck,
  vectorCheck,
} from './retrieval.dto';

export const FIND_FEATURES = ['keyword', 'semantic', 'relations', 'graph'] as const;
export type FindFeature = (typeof FIND_FEATURES)[number];
export const FIND_DEFAULT_FEATURES: readonly FindFeature[] = ['keyword', 'semantic'];

const notRephrasing = (v: unknown): boolean => v === false || v === null || v === undefined;

/** OpenAPI schemas of the union members (class-validator cannot say them; `@Check` does). */
export const FILTER_EXPRESSION_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  description:
    'Boolean expressions ({and: [...]}, {or: [...]}, {not: ...}) over conditions {prop: resource|field|keyword|created|modified|label|resource_mimetype|field_mimetype|entity|language|origin_tag|origin_metadata|origin_path|origin_source|origin_collaborator|generated|kind|status, ...}; ' +
    `${REQUEST_LIMITS.expressionDepth} levels and ${REQUEST_LIMITS.expressionNodes} values at most.`,
  properties: {
    field: filterExpressionMember('Expression on resources and fields.'),
    paragraph: filterExpressionMember('Expression on paragraphs (adds prop kind).'),
    key_value: {
      allOf: [{ $ref: '#/components/schemas/KvFilterExpressionNode' }],
      description:
        'Expression ({and}, {or}, {not}) over the values of key_value fields: {schema_id, key, eq} (equal; a range holds it), ' +
        '{schema_id, key, gte?, lte?} (numbers or dates; a range overlaps), {schema_id, key, contains} (text, case-insensitive). ' +
        'A resource matches through its key_value field schema_id.',
    },
    operator: { type: 'string', enum: ['and', 'or'], default: 'and', description: 'How field, paragraph and key_value combine.' },
  },
  additionalProperties: false,
};

/** Security groups of the caller: results are public or share a group. */
export class SecurityFilter {
  @ApiPropertyOptional({ type: [String], maxItems: REQUEST_LIMITS.listItems }) groups?: string[];
  @ApiPropertyOptional({ type: [String], deprecated: true, description: 'Same as groups.' }) access_groups?: string[];
}

/**
 * The members every retrieval request shares (/find, /search, /suggest, /ask read a retrieval plan
 * from them), declared as /find has them; /search, /suggest and /ask redeclare what differs
 * (features, graph_query, query, top_k) and add their own.
 */
@ApiExtraModels(FilterExpressionNode, KvFilterExpressionNode)
export class RetrievalRequestBase {
  @ApiPropertyOptional({ maxLength: REQUEST_LIMITS.queryChars, default: '' })
  @Check(checks.string({ max: REQUEST_LIMITS.queryChars }))
  query?: string;

  @ApiPropertyOptional({
    enum: FIND_FEATURES,
    isArray: true,
    default: FIND_DEFAULT_FEATURES,
    description: '`relations` and `graph` exclude each other; an empty list means the default.',
  })
  @Check(enumListCheck(FIND_FEATURES))
  features?: string[];

  @ApiPropertyOptional({
    allOf: [{ $ref: getSchemaPath('GraphQueryExpression') }],
    description: "The graph feature's path query (as the `query` of POST /graph); required with that feature.",
  })
  @Check(graphQueryCheck(FIND_FEATURES, FIND_DEFAULT_FEATURES))
  graph_query?: Record<string, unknown>;

  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 20 }) @Check(checks.int(1, 200)) top_k?: number;

  @ApiPropertyOptional({
    oneOf: [
      { type: 'number' },
      { type: 'object', properties: { semantic: { type: 'number' }, bm25: { type: 'number', minimum: 0 } }, additionalProperties: false },
    ],
  })
  @Check(minScoreCheck)
  min_score?: number | { semantic?: number; bm25?: number };

  @ApiPropertyOptional({ type: [Number], description: "The query's own embedding (skips embedding the query)." })
  @Check(vectorCheck)
  vector?: number[];
  @ApiPropertyOptional() @Check(checks.string()) vectorset?: string;

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['rrf', 'legacy'] },
      {
        type: 'object',
        properties: {
          name: { type: 'string', enum: ['rrf', 'legacy', 'weighted'] },
          k: { type: 'number', minimum: 0 },
          window: { type: 'integer', minimum: 1, maximum: 500 },
          boosting: { type: 'object', properties: { keyword: { type: 'number' }, semantic: { type: 'number' } } },
        },
      },
    ],
  })
  @Check(rankFusionCheck)
  rank_fusion?:
    | 'rrf'
    | 'legacy'
    | { name?: 'rrf' | 'legacy' | 'weighted'; k?: number; window?: number; boosting?: { keyword?: number; semantic?: number } };

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: [...RERANKER_NAMES] },
      {
        type: 'object',
        properties: {
          name: { type: 'string', enum: [...RERANKER_NAMES] },
          window: { type: 'integer', maximum: 200, description: 'At least top_k.' },
        },
        required: ['name'],
      },
    ],
  })
  @Check(rerankerCheck)
  reranker?: RerankerName | { name: RerankerName; window?: number };

  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) with_duplicates?: boolean;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) highlight?: boolean;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) debug?: boolean;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) show_hidden?: boolean;
  @ApiPropertyOptional({ default: false, description: "The KB's custom synonyms of the query's terms join its keyword query." })
  @Check(checks.bool())
  with_synonyms?: boolean;
  @ApiPropertyOptional({ type: SecurityFilter }) @Check(securityCheck) security?: SecurityFilter;

  @ApiPropertyOptional({ enum: ShowOptions, isArray: true, default: ['basic'] }) @Check(enumListCheck(ShowOptions)) show?: ShowOption[];
  @ApiPropertyOptional({ enum: FieldTypes, isArray: true }) @Check(enumListCheck(FieldTypes)) field_type_filter?: FieldType[];
  @ApiPropertyOptional({ enum: ExtractedOptions, isArray: true, deprecated: true })
  @Check(enumListCheck(ExtractedOptions))
  extracted?: ExtractedOption[];

  @ApiPropertyOptional({ type: 'boolean', enum: [false], description: 'Not supported: send the rephrased query instead.' })
  @Check(checks.unsupported('query rephrasing needs a generative model; send the rephrased query instead', notRephrasing))
  rephrase?: boolean;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported.' })
  @Check(checks.unsupported('query rephrasing is not available'))
  rephrase_prompt?: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported.' })
  @Check(checks.unsupported('image queries are not available'))
  query_image?: { content_type: string; b64encoded: string } | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'Not supported.' })
  @Check(checks.unsupported('stored search configurations are not available'))
  search_configuration?: string | null;
  @ApiPropertyOptional({ type: 'array', items: { type: 'string' }, nullable: true, description: 'Not supported: raise top_k.' })
  @Check(checks.unsupported('cursor pagination is not available; raise top_k'))
  search_after?: null;
  @ApiPropertyOptional({ type: 'string', description: 'Accepted without effect (it only serves rephrasing).' })
  @Check(checks.any())
  generative_model?: unknown;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'At most 10 KB; stored with the activity event.' })
  @Check(auditMetadataCheck)
  audit_metadata?: Record<string, unknown>;

  @ApiPropertyOptional(FILTER_EXPRESSION_SCHEMA) @Check(filterExpressionCheck('paragraph')) filter_expression?: FilterExpression;
  @ApiPropertyOptional({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }] },
    maxItems: REQUEST_LIMITS.listItems,
    deprecated: true,
    description: 'Tags (all must match) or {all|any|none|not_all: [tags]}; not with filter_expression.',
  })
  @Check(legacyFiltersCheck)
  filters?: LegacyFilters;
  @ApiPropertyOptional({ type: [String], description: '`<type letter>/<field id>` (t/body, a/title) or a field type.' })
  @Check((v, loc, issues, owner) => (stringListCheck()(v, loc, issues, owner), fieldsCheck(v, loc, issues, owner)))
  fields?: string[];
  @ApiPropertyOptional({ type: [String], deprecated: true }) @Check(stringListCheck()) keyword_filters?: string[];
  @ApiPropertyOptional({ type: [String], deprecated: true }) @Check(stringListCheck()) resource_filters?: string[];
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_creation_start?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_creation_end?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_modification_start?: string;
  @ApiPropertyOptional({ format: 'date-time', deprecated: true }) @Check(checks.date()) range_modification_end?: string;
}

/**
 * POST /find (and GET /find, its query turned into this shape): hybrid retrieval of paragraphs
 * grouped by resource. Every member is declared; any other is refused.
 */
@Closed()
export class FindRequest extends RetrievalRequestBase {
  @ApiPropertyOptional({
    enum: FIND_FEATURES,
    isArray: true,
    default: FIND_DEFAULT_FEATURES,
    description: '`relations` and `graph` exclude each other; an empty list means the default.',
  })
  @Check(enumListCheck(FIND_FEATURES))
  override features?: FindFeature[] = undefined;

  @ApiPropertyOptional({
    type: 'string',
    pattern: '^[a-zA-Z0-9:_-]{1,64}$',
    description:
      "A saved search configuration of kind find: its body is used with this request's members replacing its members (docs/kb-configuration.md). Unknown → 422.",
  })
  @Check(configNameCheck)
  override search_configuration?: string = undefined;
  @RephraseMember(
    "Rewrite the query for retrieval with the generative model (`generative_model`, else the KB's); the built-in rewriting without one. The result is `rephrased_query`.",
  )
  override rephrase?: boolean = undefined;
  @RephrasePromptMember()
  override rephrase_prompt?: string = undefined;
  @RephraseModelMember("The model that rephrases (else the KB's).")
  override generative_model?: string = undefined;
}

/** One edge of the relations result (API-MAP 2.2 `relations.entities.<entity>.related_to[]`). */
export class RelatedTo {
  @ApiProperty() entity!: string;
  @ApiProperty({ enum: ['resource', 'entity'] }) entity_type!: 'resource' | 'entity';
  @ApiProperty() entity_subtype!: string;
  @ApiProperty({ enum: RELATION_TYPES }) relation!: RelationType;
  @ApiProperty() relation_label!: string;
  @ApiProperty({ enum: ['in', 'out'] }) direction!: 'in' | 'out';
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) metadata!: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', nullable: true }) resource_id!: string | null;
}

/** One entity of the query and its neighbours. */
export class RelatedEntity {
  @ApiProperty({ type: [RelatedTo] }) related_to!: RelatedTo[];
}

/** The relations feature's result: the query's entities and their neighbours. */
@ApiExtraModels(RelatedEntity)
export class FindRelations {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(RelatedEntity) }, description: 'By entity' })
  entities!: Record<string, { related_to: RelatedTo[] }>;
}

/** One paragraph of a /find result. */
export class FindParagraph {
  @ApiProperty() score!: number;
  @ApiProperty({ enum: ['BM25', 'VECTOR', 'BOTH', 'RERANKER', 'RELATION_RELEVANCE'] }) score_type!: string;
  @ApiProperty({ description: 'Rank in the result, from 0.' }) order!: number;
  @ApiProperty({ description: 'The text, with <mark> around query terms when highlight was asked.' }) text!: string;
  @ApiProperty({ description: '<rid>/<type letter>/<field>/<start>-<end>' }) id!: string;
  @ApiProperty({ type: [String] }) labels!: string[];
  @ApiProperty({
    type: 'object',
    properties: {
      page_number: { type: 'integer' },
      index: { type: 'integer' },
      start: { type: 'integer' },
      end: { type: 'integer' },
      start_seconds: { type: 'number', nullable: true, description: 'Seconds into the recording (transcripts).' },
      end_seconds: { type: 'number', nullable: true },
    },
  })
  position!: { page_number: number; index: number; start: number; end: number; start_seconds: number | null; end_seconds: number | null };
  @ApiProperty() fuzzy_result!: boolean;
  @ApiProperty() page_with_visual!: boolean;
  @ApiProperty({ type: 'string', nullable: true }) reference!: string | null;
  @ApiProperty() is_a_table!: boolean;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) relevant_relations!: null;
}

/** One field of a /find resource: its matching paragraphs. */
export class FindField {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(FindParagraph) }, description: 'By paragraph id' })
  paragraphs!: Record<string, FindParagraph>;
}

/** A resource of a /find result: the members `show` asks for, and its fields with matching paragraphs. */
@ApiExtraModels(FindField)
export class FindResource extends ResourceDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(FindField) },
    description: 'By field key, `/<type letter>/<field>`',
  })
  fields!: Record<string, FindField>;
}

/** KnowledgeboxFindResults (API-MAP 2.2). */
@ApiExtraModels(FindParagraph, FindResource)
export class FindResponse {
  @ApiProperty({
    type: 'object',
    description: 'By resource id: the resource (as `show` asks) with its fields and their matching paragraphs.',
    additionalProperties: { $ref: getSchemaPath(FindResource) },
  })
  resources!: Record<string, FindResource>;
  @ApiProperty({ type: FindRelations, description: "The relations feature's result" })
  relations!: FindRelations;
  @ApiProperty() query!: string;
  @ApiProperty({ type: 'string', nullable: true }) rephrased_query!: string | null;
  @ApiProperty() total!: number;
  @ApiProperty() page_number!: number;
  @ApiProperty() page_size!: number;
  @ApiProperty() next_page!: boolean;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) nodes!: null;
  @ApiProperty({ type: [String], nullable: true }) shards!: string[] | null;
  @ApiProperty({ type: [String] }) autofilters!: string[];
  @ApiProperty({ type: 'object', properties: { semantic: { type: 'number' }, bm25: { type: 'number' } } }) min_score!: {
    semantic: number;
    bm25: number;
  };
  @ApiProperty({ type: [String], description: 'Paragraph ids, best first.' }) best_matches!: string[];
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: { type: 'number' }, description: 'Timings in ms, with debug.' })
  metrics!: Record<string, number> | null;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) search_after!: null;
}

/** The /find bus payload. */
export const FindEnvelope = searchPayloadOf(FindRequest, 'FindEnvelope');
export type FindEnvelope = SearchPayload<FindRequest>;
