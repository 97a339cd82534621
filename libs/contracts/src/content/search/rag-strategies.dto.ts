import { ApiProperty, ApiPropertyOptional, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { Check, Closed, isPlainObject, type Loc, type MemberCheck } from '../../common/member-checks';
import type { ValidationIssue } from '../../common/errors';
import { collectIssues } from '../../common/validation';
import { ASK_IMAGE_LIMITS } from './ask-images.dto';
import { RephraseMember, RephraseModelMember, RephrasePromptMember } from './rephrase-members';
import { RetrievalRequestBase } from './find.dto';
import { enumListCheck, graphQueryCheck } from './retrieval.dto';

export const ASK_FEATURES = ['keyword', 'semantic', 'relations'] as const;
export type AskFeature = (typeof ASK_FEATURES)[number];
export const ASK_DEFAULT_FEATURES: readonly AskFeature[] = ['semantic', 'keyword'];
export const RAG_STRATEGY_NAMES = [
  'full_resource',
  'field_extension',
  'hierarchy',
  'neighbouring_paragraphs',
  'metadata_extension',
  'prequeries',
  'conversation',
  'graph_beta',
] as const;
export const METADATA_EXTENSION_TYPES = ['origin', 'classification_labels', 'ners', 'extra_metadata'] as const;
export const GRAPH_RELATION_RANKINGS = ['reranker', 'generative'] as const;
export const GRAPH_ENTITY_DETECTIONS = ['predict', 'suggest'] as const;
/** graph_beta's bounds (nucliadb_models GraphStrategy: hops 1–10, default 3; top_k 1–300, default 30, or 200 with relation texts). */
export const GRAPH_STRATEGY_LIMITS = { maxHops: 10, defaultHops: 3, maxTopK: 300, defaultTopK: 30, defaultTopKRelationText: 200 } as const;

const quoted = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');
const given = (v: unknown) => v !== undefined && v !== null;

/** A prequery's request: the retrieval members of /ask (no answer options), nothing else. */
@Closed()
export class AskPrequeryRequest extends RetrievalRequestBase {
  @ApiPropertyOptional({ enum: ASK_FEATURES, isArray: true, default: ASK_DEFAULT_FEATURES })
  @Check(enumListCheck(ASK_FEATURES))
  override features?: AskFeature[] = undefined;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Refused: /ask has no graph feature.' })
  @Check(graphQueryCheck(ASK_FEATURES, ASK_DEFAULT_FEATURES))
  override graph_query?: Record<string, unknown> = undefined;
  @RephraseMember(
    "Rewrite this prequery's query for retrieval with the /ask's chat history (its `generative_model`, else the /ask's model).",
  )
  override rephrase?: boolean = undefined;
  @RephrasePromptMember()
  override rephrase_prompt?: string = undefined;
  @RephraseModelMember("The model that rephrases this prequery (else the /ask's).")
  override generative_model?: string = undefined;
}

/** One strategy of `rag_strategies`, checked by its name. */
function checkStrategy(s: Record<string, unknown>, loc: Loc, issues: ValidationIssue[]): void {
  const int = (key: string, min: number, max: number) => {
    const v = s[key];
    if (given(v) && (!Number.isInteger(v) || (v as number) < min || (v as number) > max))
      issues.push({ loc: [...loc, key], msg: `Input should be an integer between ${min} and ${max}`, type: 'int_type' });
  };
  const bool = (key: string) => {
    if (given(s[key]) && typeof s[key] !== 'boolean')
      issues.push({ loc: [...loc, key], msg: 'Input should be a valid boolean', type: 'bool_type' });
  };
  const strings = (key: string): string[] => {
    const v = s[key];
    if (!given(v)) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      issues.push({ loc: [...loc, key], msg: 'Input should be a list of strings', type: 'list_type' });
      return [];
    }
    return v as string[];
  };
  switch (s['name']) {
    case 'full_resource':
      int('count', 1, 1000);
      bool('include_remaining_text_blocks');
      return;
    case 'field_extension': {
      const fields = strings('fields');
      if (fields.length === 0)
        issues.push({ loc: [...loc, 'fields'], msg: 'List at least one field, e.g. t/amend or a/title', type: 'too_short' });
      fields.forEach((f, j) => {
        if (!/^[a-z]\/[a-zA-Z0-9:_-]+$/.test(f))
          issues.push({ loc: [...loc, 'fields', j], msg: 'A field is <type letter>/<field id>, e.g. t/amend', type: 'value_error' });
      });
      if (strings('data_augmentation_field_prefixes').length)
        issues.push({
          loc: [...loc, 'data_augmentation_field_prefixes'],
          msg: 'Not supported: no data augmentation fields exist here',
          type: 'not_supported',
        });
      return;
    }
    case 'hierarchy':
      int('count', 0, 1_000_000);
      return;
    case 'neighbouring_paragraphs':
      int('before', 0, 50);
      int('after', 0, 50);
      return;
    case 'metadata_extension':
      strings('types').forEach((t, j) => {
        if (!(METADATA_EXTENSION_TYPES as readonly string[]).includes(t))
          issues.push({ loc: [...loc, 'types', j], msg: `Input should be ${quoted(METADATA_EXTENSION_TYPES)}`, type: 'enum' });
      });
      return;
    case 'prequeries': {
      const queries = s['queries'];
      if (!Array.isArray(queries) || queries.length === 0 || queries.length > 15)
        issues.push({ loc: [...loc, 'queries'], msg: 'Input should be a list of 1 to 15 prequeries', type: 'list_type' });
      else {
        queries.forEach((q, j) => {
          const at = [...loc, 'queries', j];
          if (!isPlainObject(q) || !isPlainObject(q['request']))
            return void issues.push({ loc: [...at, 'request'], msg: 'Input should be a find request object', type: 'model_type' });
          issues.push(...collectIssues(AskPrequeryRequest, q['request'], { loc: [...at, 'request'] }).issues);
          const weight = q['weight'] === undefined ? 1 : q['weight'];
          if (typeof weight !== 'number' || weight < 0)
            issues.push({ loc: [...at, 'weight'], msg: 'Input should be a non-negative number', type: 'float_type' });
        });
      }
      const mw = s['main_query_weight'] === undefined ? 1 : s['main_query_weight'];
      if (typeof mw !== 'number' || mw < 0)
        issues.push({ loc: [...loc, 'main_query_weight'], msg: 'Input should be a non-negative number', type: 'float_type' });
      return;
    }
    case 'conversation':
      bool('attachments_text');
      bool('attachments_images');
      bool('full');
      int('max_messages', 1, 1000);
      return;
    case 'graph_beta': {
      int('hops', 1, GRAPH_STRATEGY_LIMITS.maxHops);
      int('top_k', 1, GRAPH_STRATEGY_LIMITS.maxTopK);
      bool('exclude_processor_relations');
      bool('agentic_graph_only');
      bool('relation_text_as_paragraphs');
      const enumOf = (key: string, values: readonly string[]) => {
        if (given(s[key]) && !values.includes(s[key] as string))
          issues.push({ loc: [...loc, key], msg: `Input should be ${quoted(values)}`, type: 'enum' });
      };
      enumOf('relation_ranking', GRAPH_RELATION_RANKINGS);
      enumOf('query_entity_detection', GRAPH_ENTITY_DETECTIONS);
      // agentic_graph_only is the reference's other name of exclude_processor_relations: both given must agree.
      if (typeof s['agentic_graph_only'] === 'boolean' && typeof s['exclude_processor_relations'] === 'boolean')
        if (s['agentic_graph_only'] !== s['exclude_processor_relations'])
          issues.push({
            loc: [...loc, 'agentic_graph_only'],
            msg: 'agentic_graph_only is another name of exclude_processor_relations: give one',
            type: 'value_error',
          });
      const w = s['weight'];
      if (given(w) && (typeof w !== 'number' || !Number.isFinite(w) || w < 0))
        issues.push({ loc: [...loc, 'weight'], msg: 'Input should be a non-negative number', type: 'float_type' });
      return;
    }
  }
}

/**
 * `rag_strategies` (API-MAP 2.4): at most one of each name; full_resource cannot be combined with
 * hierarchy, neighbouring_paragraphs or field_extension (it already sends whole resources).
 */
export const ragStrategiesCheck: MemberCheck = (raw, loc, issues) => {
  if (!given(raw)) return;
  if (!Array.isArray(raw)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  const seen = new Set<string>();
  raw.forEach((s, i) => {
    const at = [...loc, i];
    if (!isPlainObject(s) || typeof s['name'] !== 'string' || !(RAG_STRATEGY_NAMES as readonly string[]).includes(s['name'])) {
      return void issues.push({
        loc: [...at, 'name'],
        msg: `Input should be one of ${quoted(RAG_STRATEGY_NAMES)}`,
        type: 'union_tag_invalid',
      });
    }
    if (seen.has(s['name'])) issues.push({ loc: at, msg: `rag_strategies may contain ${s['name']} only once`, type: 'value_error' });
    seen.add(s['name']);
    checkStrategy(s, at, issues);
  });
  // The graph's results are reported as the prequery `graph` (as the reference does): no prequery may take that id.
  if (seen.has('graph_beta')) {
    raw.forEach((s, i) => {
      if (!isPlainObject(s) || s['name'] !== 'prequeries' || !Array.isArray(s['queries'])) return;
      s['queries'].forEach((q: unknown, j: number) => {
        if (isPlainObject(q) && q['id'] === 'graph')
          issues.push({ loc: [...loc, i, 'queries', j, 'id'], msg: "The id 'graph' is the graph_beta strategy's", type: 'value_error' });
      });
    });
  }
  if (seen.has('full_resource')) {
    for (const other of ['hierarchy', 'neighbouring_paragraphs', 'field_extension'])
      if (seen.has(other)) issues.push({ loc, msg: `full_resource cannot be combined with ${other}`, type: 'value_error' });
  }
};

/** One prequery of the `prequeries` strategy: a retrieval whose results join (or prefilter) the main query's. */
export interface PrequeryRequest {
  id?: string;
  request: AskPrequeryRequest;
  weight?: number;
  prefilter?: boolean;
}

/** One strategy of `rag_strategies` (API-MAP 2.4), by its name, as ragStrategiesCheck accepts it. */
export type RagStrategyRequest =
  | { name: 'full_resource'; count?: number; include_remaining_text_blocks?: boolean; apply_to?: { exclude?: string[] } }
  | { name: 'field_extension'; fields: string[]; data_augmentation_field_prefixes?: string[] }
  | { name: 'hierarchy'; count?: number }
  | { name: 'neighbouring_paragraphs'; before?: number; after?: number }
  | { name: 'metadata_extension'; types?: (typeof METADATA_EXTENSION_TYPES)[number][] }
  | { name: 'prequeries'; queries: PrequeryRequest[]; main_query_weight?: number }
  | { name: 'conversation'; attachments_text?: boolean; attachments_images?: boolean; full?: boolean; max_messages?: number }
  | {
      name: 'graph_beta';
      hops?: number;
      top_k?: number;
      exclude_processor_relations?: boolean;
      agentic_graph_only?: boolean;
      relation_text_as_paragraphs?: boolean;
      relation_ranking?: (typeof GRAPH_RELATION_RANKINGS)[number];
      query_entity_detection?: (typeof GRAPH_ENTITY_DETECTIONS)[number];
      weight?: number;
    };

// ---- The strategies as the document declares them (one schema per name; ragStrategiesCheck says the same) ----

const strategyName = (name: (typeof RAG_STRATEGY_NAMES)[number]) => ({ enum: [name], description: 'The strategy.' });

/** Whole resources instead of their matching paragraphs. */
export class FullResourceStrategy {
  @ApiProperty(strategyName('full_resource')) name!: 'full_resource';
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, description: 'How many resources, the best first.' }) count?: number;
  @ApiPropertyOptional({ description: "Also the resources' text blocks beyond those found." }) include_remaining_text_blocks?: boolean;
  @ApiPropertyOptional({
    type: 'object',
    properties: { exclude: { type: 'array', items: { type: 'string' }, description: 'Fields not sent whole.' } },
  })
  apply_to?: { exclude?: string[] };
}

/** Adds named fields of each resource found. */
export class FieldExtensionStrategy {
  @ApiProperty(strategyName('field_extension')) name!: 'field_extension';
  @ApiProperty({
    type: 'array',
    minItems: 1,
    items: { type: 'string', pattern: '^[a-z]/[a-zA-Z0-9:_-]+$' },
    description: '<type letter>/<field id>, e.g. t/amend or a/title.',
  })
  fields!: string[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'string' }, description: 'Not supported unless empty.' })
  data_augmentation_field_prefixes?: string[];
}

/** Adds the resource's title and summary above its paragraphs. */
export class HierarchyStrategy {
  @ApiProperty(strategyName('hierarchy')) name!: 'hierarchy';
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 1_000_000, description: 'Characters of the summary.' }) count?: number;
}

/** Adds the paragraphs around each one found. */
export class NeighbouringParagraphsStrategy {
  @ApiProperty(strategyName('neighbouring_paragraphs')) name!: 'neighbouring_paragraphs';
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 50 }) before?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 50 }) after?: number;
}

/** Adds metadata of each resource found. */
export class MetadataExtensionStrategy {
  @ApiProperty(strategyName('metadata_extension')) name!: 'metadata_extension';
  @ApiPropertyOptional({ enum: METADATA_EXTENSION_TYPES, isArray: true }) types?: (typeof METADATA_EXTENSION_TYPES)[number][];
}

/** One prequery: a retrieval whose results join (or prefilter) the main query's. */
export class Prequery {
  @ApiPropertyOptional() id?: string;
  @ApiProperty({ type: () => AskPrequeryRequest }) request!: AskPrequeryRequest;
  @ApiPropertyOptional({ minimum: 0, default: 1 }) weight?: number;
  @ApiPropertyOptional({ default: false, description: 'Its results restrict the main query to their resources.' }) prefilter?: boolean;
}

/** Retrievals run before the main one. */
export class PrequeriesStrategy {
  @ApiProperty(strategyName('prequeries')) name!: 'prequeries';
  @ApiProperty({ type: () => [Prequery], minItems: 1, maxItems: 15 }) queries!: Prequery[];
  @ApiPropertyOptional({ minimum: 0, default: 1 }) main_query_weight?: number;
}

/** Adds the conversation of a conversation field found. */
export class ConversationStrategy {
  @ApiProperty(strategyName('conversation')) name!: 'conversation';
  @ApiPropertyOptional() attachments_text?: boolean;
  @ApiPropertyOptional({
    description: `Send the images attached to the context's messages to a generative provider that reads images (at most ${ASK_IMAGE_LIMITS.maxAttachmentImages}, ${ASK_IMAGE_LIMITS.maxImageBytes} bytes each).`,
  })
  attachments_images?: boolean;
  @ApiPropertyOptional() full?: boolean;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000 }) max_messages?: number;
}

/** Context from the knowledge graph: relations around the entities of the question (docs/ask.md "graph_beta"). */
export class GraphBetaStrategy {
  @ApiProperty(strategyName('graph_beta')) name!: 'graph_beta';
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: GRAPH_STRATEGY_LIMITS.maxHops,
    default: GRAPH_STRATEGY_LIMITS.defaultHops,
    description: 'How far from the entities of the question the graph is explored (1: their neighbours).',
  })
  hops?: number;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: GRAPH_STRATEGY_LIMITS.maxTopK,
    description: 'Relations kept after each hop, the most relevant first; default 30, or 200 with relation_text_as_paragraphs.',
  })
  top_k?: number;
  @ApiPropertyOptional({
    default: true,
    description: "Only relations not produced by processing (the users' relations); alias agentic_graph_only.",
  })
  exclude_processor_relations?: boolean;
  @ApiPropertyOptional({ description: 'Another name of exclude_processor_relations.' }) agentic_graph_only?: boolean;
  @ApiPropertyOptional({
    default: false,
    description: 'The relations themselves as context ("A — relation → B"); false: the paragraphs the relations were found in.',
  })
  relation_text_as_paragraphs?: boolean;
  @ApiPropertyOptional({
    enum: GRAPH_RELATION_RANKINGS,
    default: 'reranker',
    description:
      "reranker: the request's reranker scores each relation's text; generative: the KB's generative provider scores them (422 without one).",
  })
  relation_ranking?: (typeof GRAPH_RELATION_RANKINGS)[number];
  @ApiPropertyOptional({
    enum: GRAPH_ENTITY_DETECTIONS,
    default: 'predict',
    description:
      "predict: entity names found in the question; suggest: entities with a word starting with one of the question's words (then predict when none).",
  })
  query_entity_detection?: (typeof GRAPH_ENTITY_DETECTIONS)[number];
  @ApiPropertyOptional({ minimum: 0, default: 3, description: "The weight of the graph's results merged with the retrieval's." })
  weight?: number;
}

/** The strategy schemas, by name (register them with ApiExtraModels where `rag_strategies` is declared). */
export const RAG_STRATEGY_CLASSES = {
  full_resource: FullResourceStrategy,
  field_extension: FieldExtensionStrategy,
  hierarchy: HierarchyStrategy,
  neighbouring_paragraphs: NeighbouringParagraphsStrategy,
  metadata_extension: MetadataExtensionStrategy,
  prequeries: PrequeriesStrategy,
  conversation: ConversationStrategy,
  graph_beta: GraphBetaStrategy,
} as const satisfies Record<(typeof RAG_STRATEGY_NAMES)[number], Function>;

/** `rag_strategies`: a list of the strategies, a union told apart by `name`. */
export const RAG_STRATEGIES_PROPERTY: ApiPropertyOptions = {
  type: 'array',
  items: {
    oneOf: Object.values(RAG_STRATEGY_CLASSES).map((c) => ({ $ref: getSchemaPath(c) })),
    discriminator: {
      propertyName: 'name',
      mapping: Object.fromEntries(Object.entries(RAG_STRATEGY_CLASSES).map(([name, c]) => [name, getSchemaPath(c)])),
    },
  },
  description: 'At most one of each; full_resource cannot be combined with hierarchy, neighbouring_paragraphs or field_extension.',
};
