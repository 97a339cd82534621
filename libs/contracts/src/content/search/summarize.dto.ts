import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Check, checks, Closed } from '../../common/member-checks';
import { ASK_OPTION_LIMITS } from './ask-options';
import { searchPayloadOf, type SearchPayload } from './search-payload';

/** Resources one /summarize request may name. */
export const SUMMARIZE_MAX_RESOURCES = 20;
export const SUMMARY_KINDS = ['simple', 'extended'] as const;
export type SummaryKind = (typeof SUMMARY_KINDS)[number];

const RESOURCE_ID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** POST /kb/{kbid}/summarize (API-MAP 2.8): summaries of the named resources, each and together. */
@Closed()
export class SummarizeRequest {
  @ApiProperty({ type: [String], minItems: 1, maxItems: SUMMARIZE_MAX_RESOURCES, description: 'Resource ids of the KB.' })
  @Check((v, loc, issues) => {
    if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
    if (v.length === 0) return void issues.push({ loc, msg: 'List should have at least 1 item', type: 'too_short' });
    if (v.length > SUMMARIZE_MAX_RESOURCES)
      return void issues.push({ loc, msg: `List should have at most ${SUMMARIZE_MAX_RESOURCES} items`, type: 'too_long' });
    v.forEach((id, i) => {
      if (typeof id !== 'string' || !RESOURCE_ID.test(id))
        issues.push({ loc: [...loc, i], msg: 'Input should be a resource id', type: 'uuid_parsing' });
    });
  })
  resources?: string[];
  @ApiPropertyOptional({ description: "The generative model (else the KB's; the built-in extractive summaries without one)." })
  @Check(checks.string())
  generative_model?: string;
  @ApiPropertyOptional({
    maxLength: ASK_OPTION_LIMITS.rephrasePromptChars,
    description: 'Instructions for a generative model (the built-in model ignores them).',
  })
  @Check(checks.string({ max: ASK_OPTION_LIMITS.rephrasePromptChars }))
  user_prompt?: string;
  @ApiPropertyOptional({ enum: SUMMARY_KINDS, default: 'simple', description: 'simple: a few sentences; extended: a longer summary.' })
  @Check(checks.oneOf(SUMMARY_KINDS))
  summary_kind?: SummaryKind;
}

export class SummarizedResource {
  @ApiProperty() summary!: string;
  @ApiProperty({ description: 'Tokens of the summary (estimated for the built-in model).' }) tokens!: number;
}

const TOKEN_COUNTS = {
  type: 'object' as const,
  properties: { input: { type: 'number' as const }, output: { type: 'number' as const }, image: { type: 'number' as const } },
  required: ['input', 'output', 'image'],
};

/** SummarizedResponse (API-MAP 2.8). */
export class SummarizeResponse {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/SummarizedResource' },
    description: 'By resource id.',
  })
  resources!: Record<string, SummarizedResource>;
  @ApiProperty({ description: 'All the resources together.' }) summary!: string;
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    properties: { normalized_tokens: TOKEN_COUNTS, customer_key_tokens: TOKEN_COUNTS },
    required: ['normalized_tokens', 'customer_key_tokens'],
    description: 'Tokens used, normalized and on the customer key',
  })
  consumption!: {
    normalized_tokens: { input: number; output: number; image: number };
    customer_key_tokens: { input: number; output: number; image: number };
  } | null;
}

export const SummarizeEnvelope = searchPayloadOf(SummarizeRequest, 'SummarizeEnvelope');
export type SummarizeEnvelope = SearchPayload<SummarizeRequest>;
