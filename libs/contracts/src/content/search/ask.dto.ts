import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Check, checks, Closed, isPlainObject, whenAbsent, type Loc, type MemberCheck } from '../../common/member-checks';
import type { ValidationIssue } from '../../common/errors';
import { configNameCheck } from './config-name';
import { RetrievalRequestBase } from './find.dto';
import { REQUEST_LIMITS } from './request-limits';
import { enumListCheck, graphQueryCheck } from './retrieval.dto';
import { answerJsonSchemaIssues, ASK_OPTION_LIMITS, REASONING_EFFORTS, reasoningIssues, rephrasePromptIssues } from './ask-options';
import { RephraseMember, RephrasePromptMember } from './rephrase-members';
import { searchPayloadOf, type SearchPayload } from './search-payload';
import {
  AskImage,
  ASK_IMAGE_LIMITS,
  extraContextImagesCheck,
  PageImageStrategy,
  ParagraphImageStrategy,
  queryImageCheck,
  RAG_IMAGES_STRATEGIES_PROPERTY,
  ragImagesStrategiesCheck,
  TableImageStrategy,
  type RagImagesStrategyRequest,
} from './ask-images.dto';
import {
  ASK_DEFAULT_FEATURES,
  ASK_FEATURES,
  RAG_STRATEGIES_PROPERTY,
  RAG_STRATEGY_CLASSES,
  ragStrategiesCheck,
  type AskFeature,
  type RagStrategyRequest,
} from './rag-strategies.dto';

const given = (v: unknown) => v !== undefined && v !== null;

/** The question: required, not blank. */
const askQueryCheck: MemberCheck = whenAbsent((v, loc, issues) => {
  checks.string({ max: REQUEST_LIMITS.queryChars, required: true })(v, loc, issues, {});
  if (typeof v === 'string' && !v.trim()) issues.push({ loc, msg: 'The question must not be empty', type: 'string_too_short' });
});

/** `chat_history` (or its old name `context`, not both): at most REQUEST_LIMITS.chatTurns turns. */
const chatHistoryCheck: MemberCheck = whenAbsent((v, loc, issues, owner) => {
  const history = given(v) ? v : owner['context'];
  const name = given(v) ? 'chat_history' : 'context';
  const at = [...loc.slice(0, -1), name];
  if (given(v) && given(owner['context']))
    issues.push({
      loc: [...loc.slice(0, -1), 'context'],
      msg: 'context is the old name of chat_history: send one of them',
      type: 'value_error',
    });
  if (!given(history)) return;
  if (!Array.isArray(history)) return void issues.push({ loc: at, msg: 'Input should be a valid list', type: 'list_type' });
  if (history.length > REQUEST_LIMITS.chatTurns)
    return void issues.push({ loc: at, msg: `List should have at most ${REQUEST_LIMITS.chatTurns} items`, type: 'too_long' });
  history.forEach((t, i) => {
    if (!isPlainObject(t) || (t['author'] !== 'USER' && t['author'] !== 'NUCLIA') || typeof t['text'] !== 'string')
      issues.push({ loc: [...at, i], msg: "Input should be {author: 'USER'|'NUCLIA', text}", type: 'model_type' });
    else if (t['text'].length > REQUEST_LIMITS.passageChars)
      issues.push({
        loc: [...at, i, 'text'],
        msg: `String should have at most ${REQUEST_LIMITS.passageChars} characters`,
        type: 'string_too_long',
      });
  });
});

const citationsCheck: MemberCheck = (v, loc, issues) => {
  if (given(v) && v !== true && v !== false && v !== 'none' && v !== 'default' && v !== 'llm_footnotes')
    issues.push({ loc, msg: "Input should be true, false, 'none', 'default' or 'llm_footnotes'", type: 'enum' });
};

const promptCheck: MemberCheck = (p, loc, issues) => {
  if (!given(p) || typeof p === 'string') return;
  if (!isPlainObject(p)) return void issues.push({ loc, msg: 'Input should be a string or {system, user}', type: 'model_type' });
  for (const k of Object.keys(p)) {
    if (k !== 'system' && k !== 'user' && k !== 'rephrase')
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    else if (given(p[k]) && typeof p[k] !== 'string')
      issues.push({ loc: [...loc, k], msg: 'Input should be a valid string', type: 'string_type' });
  }
  if (typeof p['rephrase'] === 'string') issues.push(...rephrasePromptIssues(p['rephrase'], [...loc, 'rephrase']));
};

const positiveInt = (v: unknown, loc: Loc, issues: ValidationIssue[]) => {
  if (given(v) && (!Number.isInteger(v) || (v as number) < 1))
    issues.push({ loc, msg: 'Input should be a positive integer', type: 'int_type' });
};

const maxTokensCheck: MemberCheck = (mt, loc, issues) => {
  if (!given(mt)) return;
  if (typeof mt === 'number') return positiveInt(mt, loc, issues);
  if (!isPlainObject(mt)) return void issues.push({ loc, msg: 'Input should be an integer or {context, answer}', type: 'model_type' });
  for (const k of Object.keys(mt))
    if (k !== 'context' && k !== 'answer')
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  positiveInt(mt['context'], [...loc, 'context'], issues);
  positiveInt(mt['answer'], [...loc, 'answer'], issues);
};

const seedCheck: MemberCheck = (v, loc, issues) => {
  if (given(v) && !Number.isInteger(v)) issues.push({ loc, msg: 'Input should be a valid integer', type: 'int_type' });
};

/** POST /ask (and the resource-scoped asks): retrieval members, then how to answer. */
@Closed()
@ApiExtraModels(...Object.values(RAG_STRATEGY_CLASSES), AskImage, PageImageStrategy, TableImageStrategy, ParagraphImageStrategy)
export class AskRequest extends RetrievalRequestBase {
  @ApiProperty({ maxLength: REQUEST_LIMITS.queryChars, description: 'The question; not blank.' })
  @Check(askQueryCheck)
  override query?: string = undefined;
  @ApiPropertyOptional({ enum: ASK_FEATURES, isArray: true, default: ASK_DEFAULT_FEATURES })
  @Check(enumListCheck(ASK_FEATURES))
  override features?: AskFeature[] = undefined;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Refused: /ask has no graph feature.' })
  @Check(graphQueryCheck(ASK_FEATURES, ASK_DEFAULT_FEATURES))
  override graph_query?: Record<string, unknown> = undefined;
  @ApiPropertyOptional({ description: "The generative model (else the KB's)." })
  @Check(checks.string())
  override generative_model?: string = undefined;
  @ApiPropertyOptional({
    type: 'string',
    pattern: '^[a-zA-Z0-9:_-]{1,64}$',
    description:
      "A saved search configuration of kind ask: its body is used with this request's members replacing its members (docs/kb-configuration.md). Unknown → 422.",
  })
  @Check(configNameCheck)
  override search_configuration?: string = undefined;

  @ApiPropertyOptional({ oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['none', 'default', 'llm_footnotes'] }], default: 'default' })
  @Check(citationsCheck)
  citations?: boolean | 'none' | 'default' | 'llm_footnotes';
  @ApiPropertyOptional({ minimum: 0, maximum: 1, default: 0.4 }) @Check(checks.number({ min: 0, max: 1 })) citation_threshold?: number;
  @ApiPropertyOptional({
    type: 'array',
    maxItems: REQUEST_LIMITS.chatTurns,
    items: {
      type: 'object',
      properties: {
        author: { type: 'string', enum: ['USER', 'NUCLIA'] },
        text: { type: 'string', maxLength: REQUEST_LIMITS.passageChars },
      },
      required: ['author', 'text'],
    },
  })
  @Check(chatHistoryCheck)
  chat_history?: { author: 'USER' | 'NUCLIA'; text: string }[];
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    deprecated: true,
    description: 'The old name of chat_history.',
  })
  @Check(checks.any())
  context?: { author: 'USER' | 'NUCLIA'; text: string }[];
  @ApiPropertyOptional({ minimum: 0, maximum: 1 }) @Check(checks.number({ min: 0, max: 1 })) chat_history_relevance_threshold?: number;
  @ApiPropertyOptional({
    type: [String],
    maxItems: REQUEST_LIMITS.listItems,
    description: `Passages of at most ${REQUEST_LIMITS.passageChars} characters added to the context.`,
  })
  @Check(checks.stringList({ maxItems: REQUEST_LIMITS.listItems, max: REQUEST_LIMITS.passageChars }))
  extra_context?: string[];
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string' },
      {
        type: 'object',
        properties: {
          system: { type: 'string' },
          user: { type: 'string' },
          rephrase: {
            type: 'string',
            maxLength: ASK_OPTION_LIMITS.rephrasePromptChars,
            description: 'Rephrasing instructions (with rephrase: true); must contain {question}.',
          },
        },
      },
    ],
  })
  @Check(promptCheck)
  prompt?: string | { system?: string; user?: string; rephrase?: string };
  @RephraseMember(
    'Rewrite the question with the chat history for retrieval (the generative model, or the built-in rewriting without one); reported as rephrased_query.',
  )
  override rephrase?: boolean = undefined;
  @RephrasePromptMember('Another name of prompt.rephrase; must contain {question}.')
  override rephrase_prompt?: string = undefined;
  @ApiPropertyOptional({ type: 'integer' }) @Check(seedCheck) generative_model_seed?: number;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'integer', minimum: 1 },
      { type: 'object', properties: { context: { type: 'integer', minimum: 1 }, answer: { type: 'integer', minimum: 1 } } },
    ],
  })
  @Check(maxTokensCheck)
  max_tokens?: number | { context?: number; answer?: number };
  @ApiPropertyOptional() @Check(checks.bool()) prefer_markdown?: boolean;
  @ApiPropertyOptional({ default: true }) @Check(checks.bool()) generate_answer?: boolean;
  @ApiPropertyOptional(RAG_STRATEGIES_PROPERTY)
  @Check(ragStrategiesCheck)
  rag_strategies?: RagStrategyRequest[];
  @ApiPropertyOptional({
    type: 'array',
    maxItems: ASK_IMAGE_LIMITS.maxExtraImages,
    items: { $ref: getSchemaPath(AskImage) },
    description: `Images given to the generative model with the context (providers that read images; the built-in model refuses them). At most ${ASK_IMAGE_LIMITS.maxExtraImages} images of ${ASK_IMAGE_LIMITS.maxImageBytes} bytes, ${ASK_IMAGE_LIMITS.maxTotalBytes} bytes with query_image.`,
  })
  @Check(extraContextImagesCheck)
  extra_context_images?: AskImage[];
  @ApiPropertyOptional({
    type: AskImage,
    nullable: true,
    description:
      'An image that is part of the question, given to the generative model (providers that read images; the built-in model refuses it).',
  })
  @Check(queryImageCheck)
  override query_image?: AskImage | null = undefined;
  @ApiPropertyOptional(RAG_IMAGES_STRATEGIES_PROPERTY)
  @Check(ragImagesStrategiesCheck)
  rag_images_strategies?: RagImagesStrategyRequest[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: `A JSON schema (object root) or {name, description, parameters: <schema>}: the answer is one JSON object (answer_json) instead of text, without citations. Needs a generative provider. At most ${ASK_OPTION_LIMITS.answerSchemaChars} characters, ${REQUEST_LIMITS.expressionDepth} levels, local $refs only.`,
  })
  @Check((v, loc, issues) => void issues.push(...answerJsonSchemaIssues(v, loc)))
  answer_json_schema?: Record<string, unknown> | null;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'boolean' },
      {
        type: 'object',
        properties: {
          display: { type: 'boolean', default: true },
          effort: { type: 'string', enum: [...REASONING_EFFORTS] },
          budget_tokens: { type: 'integer', minimum: ASK_OPTION_LIMITS.minBudgetTokens, maximum: ASK_OPTION_LIMITS.maxBudgetTokens },
        },
      },
    ],
    description:
      'Ask the provider to reason (OpenAI-compatible reasoning_effort, Anthropic thinking); its reasoning streams as reasoning items unless display is false.',
  })
  @Check((v, loc, issues) => void issues.push(...reasoningIssues(v, loc)))
  reasoning?: boolean | { display?: boolean; effort?: (typeof REASONING_EFFORTS)[number]; budget_tokens?: number };
}

export const AskEnvelope = searchPayloadOf(AskRequest, 'AskEnvelope');
export type AskEnvelope = SearchPayload<AskRequest>;
