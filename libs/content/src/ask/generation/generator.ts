import { DomainError, type AnswerJsonSchema } from '@kb/contracts';

/** One retrieved paragraph given to the model; `key` is its paragraph id (`<rid>/t/body/0-120`). */
export interface GenerationContext {
  key: string;
  text: string;
}

/** A previous turn of the conversation (API-MAP 2.4 `chat_history`). */
export interface ChatTurn {
  author: 'USER' | 'NUCLIA';
  text: string;
}

/** An image given to the model with the context (`mediaType` one of ASK_IMAGE_CONTENT_TYPES). */
export interface GenerationImage {
  mediaType: string;
  /** The bytes in base64. */
  data: string;
  /** Where it comes from: `extra_context_images/0`, `query_image`, or the paragraph/page it shows. */
  key: string;
}

export type CitationMode = 'none' | 'default' | 'llm_footnotes';

export interface GenerationRequest {
  question: string;
  /** Paragraphs in rank order, best first. */
  context: GenerationContext[];
  chatHistory: ChatTurn[];
  /** Templates may contain `{context}`, `{question}` and `{chat_history}`. */
  systemPrompt?: string;
  userPrompt?: string;
  maxAnswerTokens?: number;
  preferMarkdown?: boolean;
  citations: CitationMode;
  seed?: number;
  /** The answer is one JSON object following this schema, delivered as `json` events (generators with `structuredAnswers` only). */
  answerJsonSchema?: AnswerJsonSchema;
  /** Ask the model to reason first: OpenAI-compatible `reasoning_effort`, Anthropic `thinking` with a token budget. */
  reasoning?: { effort?: string; budgetTokens?: number };
  /**
   * Images for the model: context images (extra_context_images, rag_images_strategies) and the
   * question's image (`key` query_image), sent with the user message. Only generators with
   * `images` read them.
   */
  images?: GenerationImage[];
  /** Aborting ends the stream with a GenerationError of kind `aborted`. */
  signal?: AbortSignal;
}

export type GenerationEvent =
  /** A chunk of the answer; the answer is the concatenation of every chunk, in order. */
  | { type: 'text'; text: string }
  /** A chunk of the model's reasoning (reasoning models only); never part of the answer. */
  | { type: 'reasoning'; text: string }
  /** A chunk of the JSON answer (with `answerJsonSchema`); the object is the concatenation of every chunk. */
  | { type: 'json'; text: string }
  /** At most one, after the last text event. */
  | { type: 'metadata'; inputTokens?: number; outputTokens?: number; stopReason?: string };

/** The port every generative model sits behind, whatever its protocol. */
export interface Generator {
  /** The model id as the provider knows it (`gpt-4o-mini`, `claude-3-5-haiku-latest`, `extractive`). */
  readonly model: string;
  /** True when the generator can answer following a JSON schema (`answerJsonSchema`). */
  readonly structuredAnswers?: boolean;
  /** True when the generator sends `images` to the model. */
  readonly images?: boolean;
  /**
   * Streams the answer. The iterable is lazy (nothing is sent before the first `next()`), single
   * use, and throws GenerationError on any failure; breaking out of the loop cancels the request.
   */
  generate(req: GenerationRequest): AsyncIterable<GenerationEvent>;
}

export type GenerationErrorKind = 'timeout' | 'rate_limited' | 'auth' | 'provider' | 'bad_request' | 'aborted';

/** Error code of every generation failure; `details.kind` says which. */
export const GENERATION_FAILED = 'GENERATION_FAILED';
/** Error code of an unusable generative model configuration; `details.issues` lists every problem. */
export const GENERATIVE_CONFIG_INVALID = 'GENERATIVE_CONFIG_INVALID';

/**
 * A failed generation. It is a DomainError (code GENERATION_FAILED) so the transport filters can
 * carry it; `kind` tells a caller whether retrying can help (`timeout`, `rate_limited`,
 * `provider`) or not (`auth`, `bad_request`, `aborted`).
 */
export class GenerationError extends DomainError {
  constructor(
    readonly kind: GenerationErrorKind,
    message: string,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
    /** Seconds the provider asked to wait (Retry-After), when it said. */
    readonly retryAfter?: number,
  ) {
    super(GENERATION_FAILED, message, {
      kind,
      status,
      retry_after: retryAfter,
      retryable: ['timeout', 'rate_limited', 'provider'].includes(kind),
    });
    this.name = 'GenerationError';
  }
}

/** Concatenates a stream's text events: for callers that want the whole answer at once. */
export async function collectAnswer(
  events: AsyncIterable<GenerationEvent>,
): Promise<{ answer: string; reasoning: string; json: string; metadata?: Extract<GenerationEvent, { type: 'metadata' }> }> {
  let answer = '';
  let reasoning = '';
  let json = '';
  let metadata: Extract<GenerationEvent, { type: 'metadata' }> | undefined;
  for await (const event of events) {
    if (event.type === 'text') answer += event.text;
    else if (event.type === 'reasoning') reasoning += event.text;
    else if (event.type === 'json') json += event.text;
    else metadata = event;
  }
  return { answer, reasoning, json, metadata };
}
