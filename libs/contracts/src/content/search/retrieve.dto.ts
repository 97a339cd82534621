import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Check, checks, Closed, isPlainObject, type MemberCheck } from '../../common/member-checks';
import { nestedCheck } from '../../common/validation';
import { filterExpressionCheck, type FilterExpression } from './filter-expression';
import { FILTER_EXPRESSION_SCHEMA, SecurityFilter } from './find.dto';
import { REQUEST_LIMITS } from './request-limits';
import { rankFusionCheck, RERANKER_NAMES, rerankerCheck, securityCheck, vectorCheck, type RerankerName } from './retrieval.dto';
import { searchPayloadOf, type SearchPayload } from './search-payload';

/** Most matches one /retrieve returns (the /find pipeline's top_k bound). */
export const RETRIEVE_MAX_TOP_K = 200;

/** `'disabled'` or the overrides object of one retriever. */
const disabledOr =
  (cls: new () => object): MemberCheck =>
  (v, loc, issues, owner) => {
    if (v === undefined || v === null || v === 'disabled') return;
    if (!isPlainObject(v)) return void issues.push({ loc, msg: "Input should be 'disabled' or an object", type: 'model_type' });
    nestedCheck(cls, { optional: true })(v, loc, issues, owner);
  };

@Closed()
export class RetrieveKeywordOverrides {
  @ApiPropertyOptional({ minimum: 0, description: 'Lowest BM25 score kept.' }) @Check(checks.number({ min: 0 })) min_score?: number;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) with_synonyms?: boolean;
}

@Closed()
export class RetrieveSemanticOverrides {
  @ApiPropertyOptional({ type: [Number], description: "The query's own embedding (skips embedding the query)." })
  @Check(vectorCheck)
  vector?: number[];
  @ApiPropertyOptional() @Check(checks.string({ max: REQUEST_LIMITS.itemChars })) vectorset?: string;
  @ApiPropertyOptional({ description: 'Lowest similarity kept.' }) @Check(checks.number()) min_score?: number;
}

@Closed()
export class RetrieveQueryOverrides {
  @ApiPropertyOptional({
    oneOf: [{ type: 'string', enum: ['disabled'] }, { $ref: getSchemaPath(RetrieveKeywordOverrides) }],
    description: "Keyword retrieval's options, or 'disabled'.",
  })
  @Check(disabledOr(RetrieveKeywordOverrides))
  keyword?: 'disabled' | RetrieveKeywordOverrides;
  @ApiPropertyOptional({
    oneOf: [{ type: 'string', enum: ['disabled'] }, { $ref: getSchemaPath(RetrieveSemanticOverrides) }],
    description: "Semantic retrieval's options, or 'disabled'.",
  })
  @Check(disabledOr(RetrieveSemanticOverrides))
  semantic?: 'disabled' | RetrieveSemanticOverrides;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported: use POST /graph or /find with the graph feature.' })
  @Check(checks.unsupported('graph retrieval is not available on /retrieve; use /find with the graph feature'))
  graph?: null;
}

/** The high-level query: a text, with per-retriever overrides. */
@Closed()
@ApiExtraModels(RetrieveKeywordOverrides, RetrieveSemanticOverrides)
export class RetrieveTextQuery {
  @ApiProperty({ maxLength: REQUEST_LIMITS.queryChars, description: 'The text to search for.' })
  @Check(checks.string({ max: REQUEST_LIMITS.queryChars, required: true }))
  query!: string;
  @ApiPropertyOptional({ type: 'boolean', enum: [false], description: 'Not supported: send the rephrased query instead.' })
  @Check(
    checks.unsupported(
      'query rephrasing is not available on /retrieve; send the rephrased query instead',
      (v) => v === undefined || v === null || v === false,
    ),
  )
  rephrase?: boolean;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported.' })
  @Check(checks.unsupported('image queries are not available'))
  image?: null;
  @ApiPropertyOptional({ type: RetrieveQueryOverrides })
  @Check((v, loc, issues, owner) => {
    nestedCheck(RetrieveQueryOverrides, { optional: true })(v, loc, issues, owner);
    if (isPlainObject(v) && v['keyword'] === 'disabled' && v['semantic'] === 'disabled')
      issues.push({ loc, msg: 'Value error, disabling every retriever would never return a result', type: 'value_error' });
  })
  override?: RetrieveQueryOverrides;
}

@Closed()
export class RetrieveRawKeyword {
  @ApiProperty({ maxLength: REQUEST_LIMITS.queryChars })
  @Check(checks.string({ max: REQUEST_LIMITS.queryChars, required: true }))
  query!: string;
  @ApiPropertyOptional({ minimum: 0, default: 0 }) @Check(checks.number({ min: 0 })) min_score?: number;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) with_synonyms?: boolean;
}

@Closed()
export class RetrieveRawSemantic {
  @ApiProperty({ type: [Number], description: 'The query embedding.' })
  @Check((v, loc, issues, owner) => {
    if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    vectorCheck(v, loc, issues, owner);
  })
  query!: number[];
  @ApiProperty() @Check(checks.string({ max: REQUEST_LIMITS.itemChars, required: true })) vectorset!: string;
  @ApiPropertyOptional({ default: -1 }) @Check(checks.number()) min_score?: number;
}

/** The low-level query: each retriever's own input (at least one). */
@Closed()
export class RetrieveRawQuery {
  @ApiPropertyOptional({ type: RetrieveRawKeyword })
  @Check(nestedCheck(RetrieveRawKeyword, { optional: true }))
  keyword?: RetrieveRawKeyword;
  @ApiPropertyOptional({ type: RetrieveRawSemantic })
  @Check(nestedCheck(RetrieveRawSemantic, { optional: true }))
  semantic?: RetrieveRawSemantic;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported: use POST /graph or /find with the graph feature.' })
  @Check(checks.unsupported('graph retrieval is not available on /retrieve; use /find with the graph feature'))
  graph?: null;
}

@Closed()
export class RetrieveFilters {
  @ApiPropertyOptional(FILTER_EXPRESSION_SCHEMA) @Check(filterExpressionCheck('paragraph')) filter_expression?: FilterExpression;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) show_hidden?: boolean;
  @ApiPropertyOptional({ type: SecurityFilter }) @Check(securityCheck) security?: SecurityFilter;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) with_duplicates?: boolean;
}

/** `query`: a text query (`{query, override}`) or a raw one (`{keyword, semantic}`, at least one). */
const retrieveQueryCheck: MemberCheck = (v, loc, issues, owner) => {
  if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if ('query' in v) return nestedCheck(RetrieveTextQuery)(v, loc, issues, owner);
  nestedCheck(RetrieveRawQuery)(v, loc, issues, owner);
  if ((v['keyword'] === undefined || v['keyword'] === null) && (v['semantic'] === undefined || v['semantic'] === null))
    issues.push({ loc, msg: 'Value error, a query needs `query`, or `keyword` or `semantic`', type: 'value_error' });
};

/**
 * POST /kb/{kbid}/retrieve (a hidden route of the reference): retrieval only — the /find pipeline's
 * retrievers, fusion and reranker — answering paragraph ids with their scores and metadata, no
 * resources rendered.
 */
@Closed()
@ApiExtraModels(RetrieveTextQuery, RetrieveRawQuery)
export class RetrieveRequest {
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(RetrieveTextQuery) }, { $ref: getSchemaPath(RetrieveRawQuery) }] })
  @Check(retrieveQueryCheck, { whenAbsent: true })
  query!: RetrieveTextQuery | RetrieveRawQuery;
  @ApiPropertyOptional({ minimum: 1, maximum: RETRIEVE_MAX_TOP_K, default: 20 })
  @Check(checks.int(1, RETRIEVE_MAX_TOP_K))
  top_k?: number;
  @ApiPropertyOptional({ type: RetrieveFilters }) @Check(nestedCheck(RetrieveFilters, { optional: true })) filters?: RetrieveFilters;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['rrf'] },
      {
        type: 'object',
        properties: {
          name: { type: 'string', enum: ['rrf', 'weighted'] },
          k: { type: 'number', minimum: 0 },
          window: { type: 'integer', minimum: 1, maximum: 500 },
          boosting: { type: 'object', properties: { keyword: { type: 'number' }, semantic: { type: 'number' } } },
        },
      },
    ],
  })
  @Check(rankFusionCheck)
  rank_fusion?: 'rrf' | { name?: 'rrf' | 'weighted'; k?: number; window?: number; boosting?: { keyword?: number; semantic?: number } };
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: [...RERANKER_NAMES] },
      { type: 'object', properties: { name: { type: 'string', enum: [...RERANKER_NAMES] }, window: { type: 'integer', maximum: 200 } } },
    ],
    description: 'Reranks the best candidates of a text query (none by default).',
  })
  @Check(rerankerCheck)
  reranker?: RerankerName | { name: RerankerName; window?: number };
}

export const RETRIEVE_SCORE_SOURCES = ['index', 'rank_fusion', 'reranker'] as const;
export const RETRIEVE_SCORE_TYPES = ['semantic', 'keyword', 'graph', 'rrf', 'wCombSUM', 'reranker'] as const;

export class RetrieveScore {
  @ApiProperty() score!: number;
  @ApiProperty({ enum: RETRIEVE_SCORE_SOURCES }) source!: (typeof RETRIEVE_SCORE_SOURCES)[number];
  @ApiProperty({ enum: RETRIEVE_SCORE_TYPES }) type!: (typeof RETRIEVE_SCORE_TYPES)[number];
}

export class RetrieveScores {
  @ApiProperty() value!: number;
  @ApiProperty({ enum: RETRIEVE_SCORE_SOURCES }) source!: (typeof RETRIEVE_SCORE_SOURCES)[number];
  @ApiProperty({ enum: RETRIEVE_SCORE_TYPES }) type!: (typeof RETRIEVE_SCORE_TYPES)[number];
  @ApiProperty({ type: [RetrieveScore], description: 'The score that set the order (the final one only).' }) history!: RetrieveScore[];
}

export class RetrieveMetadata {
  @ApiProperty({ type: [String], description: 'Always empty: the index keeps labels per paragraph (see paragraph_labels).' })
  field_labels!: string[];
  @ApiProperty({ type: [String], description: "Every label the paragraph carries: its resource's, its field's and its own." })
  paragraph_labels!: string[];
  @ApiProperty() is_an_image!: boolean;
  @ApiProperty() is_a_table!: boolean;
  @ApiProperty({ type: 'string', nullable: true }) source_file!: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) page!: number | null;
  @ApiProperty({ type: 'boolean', nullable: true }) in_page_with_visual!: boolean | null;
}

export class RetrieveMatch {
  @ApiProperty({ description: 'Paragraph id: `{rid}/{type letter}/{field}[/{split}]/{start}-{end}`.' }) id!: string;
  @ApiProperty({ type: RetrieveScores }) score!: RetrieveScores;
  @ApiProperty({ type: RetrieveMetadata }) metadata!: RetrieveMetadata;
}

/** RetrievalResponse: the matches, best first. */
export class RetrieveResponse {
  @ApiProperty({ type: [RetrieveMatch] }) matches!: RetrieveMatch[];
}

export const RetrieveEnvelope = searchPayloadOf(RetrieveRequest, 'RetrieveEnvelope');
export type RetrieveEnvelope = SearchPayload<RetrieveRequest>;
