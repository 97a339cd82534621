import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateNested,
  buildMessage,
  type ValidationOptions,
} from 'class-validator';

/**
 * The predict API (API-MAP 1.5 "Other NUA routes", docs/predict.md): the KB's models as a service.
 * Every size a caller can name is bounded here, before anything reaches a model.
 */
export const PREDICT_LIMITS = {
  /** Characters of one text to embed, tag or ask about. */
  text: 20_000,
  /** Texts of one batch (`sentences`, `compat/embeddings`). */
  texts: 100,
  /** Context pieces of chat, rerank and remi. */
  contexts: 200,
  /** Turns of a chat history, or messages of an OpenAI-compatible chat. */
  turns: 100,
  /** Upper bound of `max_tokens` of any generation. */
  maxTokens: 4_096,
  /** Resources of one summarize request, and fields of each. */
  resources: 50,
  fields: 20,
  /** Characters of one document to summarize. */
  document: 100_000,
} as const;

export const PREDICT_GET_ENDPOINTS = ['sentence', 'tokens', 'query'] as const;
export const PREDICT_POST_ENDPOINTS = ['sentences', 'query', 'chat', 'summarize', 'rephrase', 'rerank', 'remi'] as const;

/** A map of string → string with at most `maxEntries` entries, keys ≤ 256 and values ≤ `maxChars` characters. */
export function IsStringMap(maxEntries: number, maxChars: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringMap',
      validator: {
        validate: (v: unknown) => {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
          const entries = Object.entries(v as Record<string, unknown>);
          return (
            entries.length <= maxEntries && entries.every(([k, x]) => k.length <= 256 && typeof x === 'string' && x.length <= maxChars)
          );
        },
        defaultMessage: buildMessage(
          (each) => `${each}$property must be an object of at most ${maxEntries} strings of at most ${maxChars} characters`,
          options,
        ),
      },
    },
    options,
  );
}

/** `GET predict/sentence|tokens|query?text=`: one text. */
export class PredictTextQuery {
  @ApiProperty({ maxLength: PREDICT_LIMITS.text }) @IsDefined() @IsString() @MinLength(1) @MaxLength(PREDICT_LIMITS.text) text!: string;
  /** A semantic model (vectorset) of the KB; absent → its default. */
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) semantic_model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) token_model?: string;
}

/** `POST predict/query`: the same members in a body. */
export class PredictQueryBody extends PredictTextQuery {}

/** `POST predict/sentences`: a batch of texts, one vector each. */
export class PredictSentencesBody {
  @ApiProperty({ type: [String], maxItems: PREDICT_LIMITS.texts })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PREDICT_LIMITS.texts)
  @IsString({ each: true })
  @MaxLength(PREDICT_LIMITS.text, { each: true })
  texts!: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) model?: string;
}

export class PredictMessage {
  @ApiProperty({ enum: ['USER', 'NUCLIA'] }) @IsDefined() @IsIn(['USER', 'NUCLIA']) author!: 'USER' | 'NUCLIA';
  @ApiProperty() @IsDefined() @IsString() @MaxLength(PREDICT_LIMITS.text) text!: string;
}

export class PredictUserPrompt {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(PREDICT_LIMITS.text) prompt!: string;
}

/** `POST predict/chat` (the reference's ChatModel; members it has that are not listed are ignored). */
export class PredictChatBody {
  @ApiProperty() @IsDefined() @IsString() @MinLength(1) @MaxLength(PREDICT_LIMITS.text) question!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) user_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() retrieval?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) system?: string;
  @ApiPropertyOptional({ type: PredictUserPrompt })
  @IsOptional()
  @ValidateNested()
  @Type(() => PredictUserPrompt)
  user_prompt?: PredictUserPrompt;
  @ApiPropertyOptional({ type: [PredictMessage] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PREDICT_LIMITS.turns)
  @ValidateNested({ each: true })
  @Type(() => PredictMessage)
  chat_history?: PredictMessage[];
  /** The context: a list of texts, or a map of id → text (ids become citation keys). */
  @ApiPropertyOptional({
    oneOf: [
      { type: 'array', items: { type: 'string' } },
      { type: 'object', additionalProperties: { type: 'string' } },
    ],
  })
  @IsOptional()
  query_context?: string[] | Record<string, string>;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
  @ApiPropertyOptional({ maximum: PREDICT_LIMITS.maxTokens })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(PREDICT_LIMITS.maxTokens)
  max_tokens?: number;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() prefer_markdown?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsInt() seed?: number;
}

export class PredictSummarizeResource {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  @IsDefined()
  @IsStringMap(PREDICT_LIMITS.fields, PREDICT_LIMITS.document)
  fields!: Record<string, string>;
}

/** `POST predict/summarize`: texts by resource and field. */
export class PredictSummarizeBody {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/PredictSummarizeResource' } })
  @IsDefined()
  @IsObject()
  resources!: Record<string, PredictSummarizeResource>;
  @ApiPropertyOptional({ enum: ['simple', 'extended'] }) @IsOptional() @IsIn(['simple', 'extended']) summary_kind?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
}

/** `POST predict/rephrase`: a follow-up question made standalone with the conversation. */
export class PredictRephraseBody {
  @ApiProperty() @IsDefined() @IsString() @MinLength(1) @MaxLength(PREDICT_LIMITS.text) question!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) user_id?: string;
  @ApiPropertyOptional({ type: [PredictMessage] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PREDICT_LIMITS.turns)
  @ValidateNested({ each: true })
  @Type(() => PredictMessage)
  context?: PredictMessage[];
  @ApiPropertyOptional({ type: [PredictMessage] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PREDICT_LIMITS.turns)
  @ValidateNested({ each: true })
  @Type(() => PredictMessage)
  chat_history?: PredictMessage[];
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(PREDICT_LIMITS.turns)
  @IsString({ each: true })
  @MaxLength(PREDICT_LIMITS.text, { each: true })
  user_context?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) prompt?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
}

/** `POST predict/rerank`: scores of each context piece for the question. */
export class PredictRerankBody {
  @ApiProperty() @IsDefined() @IsString() @MinLength(1) @MaxLength(PREDICT_LIMITS.text) question!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) user_id?: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  @IsDefined()
  @IsStringMap(PREDICT_LIMITS.contexts, PREDICT_LIMITS.text)
  context!: Record<string, string>;
}

/** `POST predict/remi` (RemiRequest): at least one of question, answer, contexts. */
export class PredictRemiBody {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) user_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) question?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) answer?: string;
  @ApiPropertyOptional({ type: [String], maxItems: 50 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(PREDICT_LIMITS.text, { each: true })
  contexts?: string[];
}

/** One message of an OpenAI-compatible chat; `content` is a string or text parts. */
export class CompatChatMessage {
  @ApiProperty({ enum: ['system', 'developer', 'user', 'assistant'] })
  @IsDefined()
  @IsIn(['system', 'developer', 'user', 'assistant'])
  role!: string;
  @ApiProperty({
    oneOf: [
      { type: 'string' },
      { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, text: { type: 'string' } } } },
    ],
  })
  @IsDefined()
  content!: string | { type: string; text?: string }[];
}

/** `POST predict/compat/chat/completions` (OpenAI's chat completions request, the members used here). */
export class CompatChatCompletionsBody {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) model?: string;
  @ApiProperty({ type: [CompatChatMessage] })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PREDICT_LIMITS.turns)
  @ValidateNested({ each: true })
  @Type(() => CompatChatMessage)
  messages!: CompatChatMessage[];
  @ApiPropertyOptional() @IsOptional() @IsBoolean() stream?: boolean;
  @ApiPropertyOptional({ maximum: PREDICT_LIMITS.maxTokens })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(PREDICT_LIMITS.maxTokens)
  max_tokens?: number;
  @ApiPropertyOptional({ maximum: PREDICT_LIMITS.maxTokens })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(PREDICT_LIMITS.maxTokens)
  max_completion_tokens?: number;
  @ApiPropertyOptional() @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @ApiPropertyOptional({ enum: [1] }) @IsOptional() @IsIn([1]) n?: number;
  @ApiPropertyOptional() @IsOptional() @IsInt() seed?: number;
}

/** `POST predict/compat/embeddings` (OpenAI's embeddings request). */
export class CompatEmbeddingsBody {
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: PREDICT_LIMITS.texts }] })
  @IsDefined()
  input!: string | string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) model?: string;
  @ApiPropertyOptional({ enum: ['float', 'base64'] }) @IsOptional() @IsIn(['float', 'base64']) encoding_format?: 'float' | 'base64';
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) user?: string;
}

// ---- Responses (the reference's shapes) ----

export class PredictSentenceResponse {
  @ApiProperty({ type: [Number] }) data!: number[];
  @ApiProperty() time!: number;
}

export class PredictSentencesResponse {
  @ApiProperty({ type: 'array', items: { type: 'array', items: { type: 'number' } } }) data!: number[][];
  @ApiProperty() model!: string;
  @ApiProperty() time!: number;
}

export class PredictToken {
  @ApiProperty() text!: string;
  @ApiProperty() ner!: string;
  @ApiProperty() start!: number;
  @ApiProperty() end!: number;
}

export class PredictTokensResponse {
  @ApiProperty({ type: [PredictToken] }) tokens!: PredictToken[];
  @ApiProperty() time!: number;
}

export class PredictQueryResponse {
  @ApiProperty() language!: string;
  @ApiProperty({ type: [String] }) stop_words!: string[];
  @ApiProperty() semantic_threshold!: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' } }) semantic_thresholds!: Record<string, number>;
  @ApiProperty() visual_llm!: boolean;
  @ApiProperty() max_context!: number;
  @ApiProperty({ type: PredictTokensResponse }) entities!: PredictTokensResponse;
  @ApiProperty({ type: PredictSentenceResponse }) sentence!: PredictSentenceResponse;
  @ApiProperty() query!: string;
}

export class PredictSummarizedResource {
  @ApiProperty() summary!: string;
  @ApiProperty() tokens!: number;
}

export class PredictSummarizeResponse {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/PredictSummarizedResource' } }) resources!: Record<
    string,
    PredictSummarizedResource
  >;
  @ApiProperty() summary!: string;
}

export class PredictRerankResponse {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' } }) context_scores!: Record<string, number>;
}

export class PredictAnswerRelevance {
  @ApiProperty() score!: number;
  @ApiProperty() reason!: string;
}

export class PredictRemiResponse {
  @ApiProperty() time!: number;
  @ApiPropertyOptional({ type: PredictAnswerRelevance }) answer_relevance?: PredictAnswerRelevance | null;
  @ApiPropertyOptional({ type: [Number] }) context_relevance?: number[] | null;
  @ApiPropertyOptional({ type: [Number] }) groundedness?: number[] | null;
}

export class CompatModel {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['model'] }) object!: 'model';
  @ApiProperty() created!: number;
  @ApiProperty() owned_by!: string;
}

export class CompatModelsResponse {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [CompatModel] }) data!: CompatModel[];
}

export class CompatEmbedding {
  @ApiProperty({ enum: ['embedding'] }) object!: 'embedding';
  @ApiProperty() index!: number;
  @ApiProperty({
    oneOf: [
      { type: 'array', items: { type: 'number' } },
      { type: 'string', format: 'byte' },
    ],
    description: 'The vector; base64 of little-endian float32s with `encoding_format: base64`',
  })
  embedding!: number[] | string;
}

export class CompatEmbeddingsUsage {
  @ApiProperty() prompt_tokens!: number;
  @ApiProperty() total_tokens!: number;
}

/** `compat/embeddings`: OpenAI's embeddings answer. */
export class CompatEmbeddingsResponse {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [CompatEmbedding] }) data!: CompatEmbedding[];
  @ApiProperty() model!: string;
  @ApiProperty({ type: CompatEmbeddingsUsage }) usage!: CompatEmbeddingsUsage;
}

export class CompatAssistantMessage {
  @ApiProperty({ enum: ['assistant'] }) role!: 'assistant';
  @ApiProperty() content!: string;
  @ApiProperty({ type: 'string', nullable: true, enum: [null] }) refusal!: null;
}

export class CompatChoice {
  @ApiProperty() index!: number;
  @ApiProperty({ type: CompatAssistantMessage }) message!: CompatAssistantMessage;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) logprobs!: null;
  @ApiProperty({ enum: ['stop', 'length'] }) finish_reason!: 'stop' | 'length';
}

export class CompatChatUsage {
  @ApiProperty() prompt_tokens!: number;
  @ApiProperty() completion_tokens!: number;
  @ApiProperty() total_tokens!: number;
}

/** `compat/chat/completions` without `stream`: OpenAI's chat.completion. */
export class CompatChatCompletion {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['chat.completion'] }) object!: 'chat.completion';
  @ApiProperty() created!: number;
  @ApiProperty() model!: string;
  @ApiProperty({ type: [CompatChoice] }) choices!: CompatChoice[];
  @ApiProperty({ type: CompatChatUsage }) usage!: CompatChatUsage;
}

export class CompatChunkDelta {
  @ApiPropertyOptional({ enum: ['assistant'] }) role?: 'assistant';
  @ApiPropertyOptional() content?: string;
}

export class CompatChunkChoice {
  @ApiProperty() index!: number;
  @ApiProperty({ type: CompatChunkDelta }) delta!: CompatChunkDelta;
  @ApiProperty({ type: 'string', nullable: true, enum: [null], description: 'Always null' }) logprobs!: null;
  @ApiProperty({ type: 'string', nullable: true, enum: ['stop', 'length', null] }) finish_reason!: 'stop' | 'length' | null;
}

/** One `data:` event of the `stream: true` answer (the stream ends with `data: [DONE]`). */
export class CompatChatCompletionChunk {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['chat.completion.chunk'] }) object!: 'chat.completion.chunk';
  @ApiProperty() created!: number;
  @ApiProperty() model!: string;
  @ApiProperty({ type: [CompatChunkChoice] }) choices!: CompatChunkChoice[];
}

// ---- Bus envelopes (gateway → services) ----

/** The KB whose models answer; absent → the built-in models (the understanding API without a KB). */
export class PredictKbRef {
  @IsOptional() @IsString() @MaxLength(100) kbid?: string;
}

/** Vectors of texts with a KB's semantic model (`understanding.predict.embed`). */
export class PredictEmbedRequest extends PredictKbRef {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PREDICT_LIMITS.texts)
  @IsString({ each: true })
  @MaxLength(PREDICT_LIMITS.text, { each: true })
  texts!: string[];
  @IsOptional() @IsString() @MaxLength(256) vectorset?: string;
  /** `query` applies the model's query prompt; `passage` its passage prompt. */
  @IsIn(['query', 'passage']) input!: 'query' | 'passage';
}

export interface PredictEmbedResponse {
  model: string;
  vectors: number[][];
  similarity: 'COSINE' | 'DOT';
  threshold: number;
  /** Every semantic model of the KB with its threshold. */
  thresholds: Record<string, number>;
}

/** Named entities and language of one text (`understanding.predict.tokens`). */
export class PredictTokensRequest {
  @IsString() @MaxLength(PREDICT_LIMITS.text) text!: string;
}

export interface PredictTokensResult {
  tokens: { text: string; ner: string; start: number; end: number }[];
  language: string;
}

/** A generation with the KB's generative model (`content.predict.generate`), checked by the gateway's DTOs. */
export class PredictGenerateRequest extends PredictKbRef {
  @IsIn(['chat', 'summarize', 'rephrase']) task!: 'chat' | 'summarize' | 'rephrase';
  @IsString() @MaxLength(PREDICT_LIMITS.text) question!: string;
  @IsArray() @ArrayMaxSize(PREDICT_LIMITS.contexts) context!: { key: string; text: string }[];
  @IsArray() @ArrayMaxSize(PREDICT_LIMITS.turns) chat_history!: { author: 'USER' | 'NUCLIA'; text: string }[];
  @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) system?: string;
  @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) user_prompt?: string;
  @IsOptional() @IsString() @MaxLength(256) generative_model?: string;
  @IsOptional() @IsInt() @Min(1) @Max(PREDICT_LIMITS.maxTokens) max_tokens?: number;
  @IsOptional() @IsBoolean() prefer_markdown?: boolean;
  @IsOptional() @IsInt() seed?: number;
}

/** Items of a generation: text chunks, then one `done` with the model and token counts. */
export type PredictGenerateItem =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'done'; model: string; input_tokens?: number; output_tokens?: number; stop_reason?: string };

export class PredictRerankRequest {
  @IsString() @MaxLength(PREDICT_LIMITS.text) question!: string;
  @IsObject() context!: Record<string, string>;
}

export class PredictRemiRequest extends PredictKbRef {
  @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) question?: string;
  @IsOptional() @IsString() @MaxLength(PREDICT_LIMITS.text) answer?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) contexts?: string[];
}

/** The models a KB offers (`content.predict.models`): its generative model and semantic models. */
export interface PredictModelsDto {
  generative: string;
  semantic: string[];
  /** Generative models the KB can use, by provider (`builtin`, and each provider entry of `user_keys` naming a model). */
  generative_providers: Record<string, string[]>;
}

/** One model of a KB (`GET /kb/{kbid}/models`, `GET /kb/{kbid}/model/{model_id}`). */
export class KbModelDto {
  @ApiProperty() model_id!: string;
  @ApiProperty({ enum: ['generative', 'semantic'] }) model_type!: 'generative' | 'semantic';
  @ApiProperty() title!: string;
  @ApiProperty({ description: 'The KB uses it by default for its type' }) default!: boolean;
}
