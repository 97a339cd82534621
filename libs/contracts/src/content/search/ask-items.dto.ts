import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { FindRelations, FindResponse } from './find.dto';

/**
 * The items of the /ask NDJSON stream (API-MAP 2.4), one `{"item": <AskItem>}` per line, in this
 * order: answer and reasoning chunks (or, with `answer_json_schema`, one answer_json), retrieval,
 * prequeries, status, augmented_context, citations or footnote_citations, metadata, consumption
 * (with `x-show-consumption`), relations (with the relations feature), debug (with `debug`);
 * `error` only when the stream fails after its headers went out.
 */
export class AskAnswerItem {
  @ApiProperty({ enum: ['answer'] }) type!: 'answer';
  @ApiProperty({ description: 'The next chunk of the answer.' }) text!: string;
}

export class AskReasoningItem {
  @ApiProperty({ enum: ['reasoning'] }) type!: 'reasoning';
  @ApiProperty() text!: string;
}

export class AskAnswerJsonItem {
  @ApiProperty({ enum: ['answer_json'] }) type!: 'answer_json';
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The answer, following answer_json_schema.' }) object!: Record<
    string,
    unknown
  >;
}

const RELATIONS_SCHEMA = { type: () => FindRelations, description: "The relations feature's result" };

export class AskRelationsItem {
  @ApiProperty({ enum: ['relations'] }) type!: 'relations';
  @ApiProperty(RELATIONS_SCHEMA) relations!: FindRelations;
}

export class AskBestMatch {
  @ApiProperty() id!: string;
  @ApiProperty() score!: number;
  @ApiProperty() score_type!: string;
}

export class AskRetrievalItem {
  @ApiProperty({ enum: ['retrieval'] }) type!: 'retrieval';
  @ApiProperty({ type: FindResponse }) results!: FindResponse;
  @ApiProperty({ type: [AskBestMatch] }) best_matches!: AskBestMatch[];
}

export class AskPrequeriesItem {
  @ApiProperty({ enum: ['prequeries'] }) type!: 'prequeries';
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/FindResponse' }, description: 'By prequery id.' })
  results!: Record<string, FindResponse>;
}

export class AskStatusItem {
  @ApiProperty({ enum: ['status'] }) type!: 'status';
  @ApiProperty({ enum: ['0', '-1', '-2', '-3'], description: '0 success, -1 error, -2 no context, -3 no retrieval data.' }) code!: string;
  @ApiProperty({ enum: ['success', 'error', 'no_context', 'no_retrieval_data'] }) status!: string;
  @ApiPropertyOptional() details?: string;
}

/** A paragraph a RAG strategy added to the context. */
export class AskAugmentedParagraph {
  @ApiProperty() id!: string;
  @ApiProperty() text!: string;
  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { start: { type: 'integer' }, end: { type: 'integer' }, index: { type: 'integer' }, page_number: { type: 'integer' } },
  })
  position!: { start: number; end: number; index: number; page_number: number } | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The paragraph it was added for' }) parent!: string | null;
  @ApiProperty({ description: 'The strategy that added it' }) augmentation_type!: string;
}

const AUGMENTED = {
  type: 'object' as const,
  properties: {
    paragraphs: {
      type: 'object' as const,
      additionalProperties: { $ref: getSchemaPath(AskAugmentedParagraph) },
      description: 'By paragraph id',
    },
    fields: { type: 'object' as const, properties: {}, additionalProperties: false, description: 'Always empty' },
  },
  required: ['paragraphs', 'fields'],
  description: 'What the RAG strategies and extra_context added to the context.',
};

@ApiExtraModels(AskAugmentedParagraph)
export class AskAugmentedContextItem {
  @ApiProperty({ enum: ['augmented_context'] }) type!: 'augmented_context';
  @ApiProperty(AUGMENTED)
  augmented!: { paragraphs: Record<string, AskAugmentedParagraph>; fields: Record<string, never> };
}

export class AskCitationsItem {
  @ApiProperty({ enum: ['citations'] }) type!: 'citations';
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
    description: 'By paragraph id: [start, end] spans of the answer it supports.',
  })
  citations!: Record<string, [number, number][]>;
}

export class AskFootnoteCitationsItem {
  @ApiProperty({ enum: ['footnote_citations'] }) type!: 'footnote_citations';
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Footnote → paragraph id.' })
  footnote_to_context!: Record<string, string>;
}

const TOKEN_USE = {
  type: 'object' as const,
  properties: {
    input: { type: 'integer' as const },
    output: { type: 'integer' as const },
    input_nuclia: { type: 'integer' as const },
    output_nuclia: { type: 'integer' as const },
  },
};
const TIMINGS = {
  type: 'object' as const,
  properties: { generative_first_chunk: { type: 'number' as const, nullable: true }, generative_total: { type: 'number' as const } },
  description: 'Seconds.',
};

export class AskMetadataItem {
  @ApiProperty({ enum: ['metadata'] }) type!: 'metadata';
  @ApiProperty(TOKEN_USE) tokens!: { input: number; output: number; input_nuclia: number; output_nuclia: number };
  @ApiProperty(TIMINGS) timings!: { generative_first_chunk: number | null; generative_total: number };
}

const TOKENS = {
  type: 'object',
  properties: { input: { type: 'integer' }, output: { type: 'integer' }, image: { type: 'integer' } },
} as const;

export class AskConsumptionItem {
  @ApiProperty({ enum: ['consumption'] }) type!: 'consumption';
  @ApiProperty(TOKENS) normalized_tokens!: { input: number; output: number; image: number };
  @ApiProperty(TOKENS) customer_key_tokens!: { input: number; output: number; image: number };
}

const DEBUG_METADATA = {
  type: 'object' as const,
  properties: {
    prompt_context: { type: 'array' as const, items: { type: 'string' as const } },
    predict_request: { type: 'object' as const, additionalProperties: true, description: 'The request sent to the generative model' },
  },
};
const DEBUG_METRICS = { type: 'object' as const, additionalProperties: { type: 'number' as const } };

export class AskDebugItem {
  @ApiProperty({ enum: ['debug'] }) type!: 'debug';
  @ApiProperty(DEBUG_METADATA) metadata!: {
    prompt_context: string[];
    predict_request: Record<string, unknown>;
  };
  @ApiProperty(DEBUG_METRICS) metrics!: Record<string, number>;
}

export class AskErrorItem {
  @ApiProperty({ enum: ['error'] }) type!: 'error';
  @ApiProperty() error!: string;
}

export type AskItem =
  | AskAnswerItem
  | AskReasoningItem
  | AskAnswerJsonItem
  | AskRetrievalItem
  | AskPrequeriesItem
  | AskStatusItem
  | AskAugmentedContextItem
  | AskCitationsItem
  | AskFootnoteCitationsItem
  | AskMetadataItem
  | AskConsumptionItem
  | AskRelationsItem
  | AskDebugItem
  | AskErrorItem;

export const ASK_ITEM_CLASSES = [
  AskAnswerItem,
  AskReasoningItem,
  AskAnswerJsonItem,
  AskRetrievalItem,
  AskPrequeriesItem,
  AskStatusItem,
  AskAugmentedContextItem,
  AskCitationsItem,
  AskFootnoteCitationsItem,
  AskMetadataItem,
  AskConsumptionItem,
  AskRelationsItem,
  AskDebugItem,
  AskErrorItem,
] as const;

/** One line of the /ask NDJSON stream. */
@ApiExtraModels(...ASK_ITEM_CLASSES)
export class AskStreamLine {
  @ApiProperty({
    oneOf: ASK_ITEM_CLASSES.map((c) => ({ $ref: getSchemaPath(c) })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        ASK_ITEM_CLASSES.map((c) => [
          c.name
            .replace(/^Ask|Item$/g, '')
            .replace(/([a-z])([A-Z])/g, '$1_$2')
            .toLowerCase(),
          getSchemaPath(c),
        ]),
      ),
    },
  })
  item!: AskItem;
}

/** SyncAskResponse (API-MAP 2.4): the stream folded into one JSON object (`x-synchronous: true`). */
export class SyncAskResponse {
  @ApiProperty() answer!: string;
  @ApiPropertyOptional() reasoning?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'With answer_json_schema: the answer as JSON.' })
  answer_json?: Record<string, unknown>;
  @ApiPropertyOptional(RELATIONS_SCHEMA) relations?: FindRelations;
  @ApiProperty({ enum: ['success', 'error', 'no_context', 'no_retrieval_data'] }) status!: string;
  @ApiProperty() learning_id!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'array', items: { type: 'integer' } } } })
  citations!: Record<string, [number, number][]>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) citation_footnote_to_context?: Record<string, string>;
  @ApiPropertyOptional({ type: FindResponse }) retrieval_results?: FindResponse;
  @ApiProperty({ type: [AskBestMatch] }) retrieval_best_matches!: AskBestMatch[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: '#/components/schemas/FindResponse' } }) prequeries?: Record<
    string,
    FindResponse
  >;
  @ApiPropertyOptional() error_details?: string;
  @ApiPropertyOptional(AUGMENTED) augmented_context?: AskAugmentedContextItem['augmented'];
  @ApiPropertyOptional({ type: 'object', properties: { tokens: TOKEN_USE, timings: TIMINGS } }) metadata?: {
    tokens: AskMetadataItem['tokens'];
    timings: AskMetadataItem['timings'];
  };
  @ApiPropertyOptional({ type: 'object', properties: { normalized_tokens: TOKENS, customer_key_tokens: TOKENS } }) consumption?: {
    normalized_tokens: AskConsumptionItem['normalized_tokens'];
    customer_key_tokens: AskConsumptionItem['customer_key_tokens'];
  };
  @ApiPropertyOptional({ type: 'object', properties: { metadata: DEBUG_METADATA, metrics: DEBUG_METRICS } }) debug?: {
    metadata: AskDebugItem['metadata'];
    metrics: AskDebugItem['metrics'];
  };
  @ApiPropertyOptional({ type: [String] }) prompt_context?: string[];
}
