import type { OutboundHttp } from '@kb/platform/net';
import { GenerationError, type GenerationEvent, type GenerationRequest, type Generator } from './generator';
import { buildPrompt, fitContext } from './prompt';
import { WHOLE_JSON_BODY, endpointUrl, parseJson, postForEvents } from './provider-stream';

export interface OpenAiCompatibleGeneratorOptions {
  /** Base address up to the version (`https://api.openai.com/v1`, `http://localhost:11434/v1`, an Azure deployment); `/chat/completions` is appended. */
  url: string;
  key?: string;
  model: string;
  /** Longest wait for the response and between chunks (default 60 s). */
  timeoutMs?: number;
  /** The guarded outbound client (default: the process's). */
  http?: OutboundHttp;
  /** Extra headers (organisation, project, gateway routing…). */
  headers?: Record<string, string>;
  /** `bearer` sends `Authorization: Bearer <key>` (OpenAI, vLLM, Ollama, llama.cpp); `api-key` sends `api-key: <key>` (Azure OpenAI). */
  auth?: 'bearer' | 'api-key';
  /** Appended as `?api-version=` (Azure OpenAI). */
  apiVersion?: string;
  temperature?: number;
  /** Answer length when the request names none. */
  defaultMaxTokens?: number;
  /** The request member carrying the answer length: reasoning models (o1, o3) only accept `max_completion_tokens`. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Prompt size the model accepts; context beyond it is trimmed at sentence boundaries. */
  maxInputTokens?: number;
  /** Ask for the usage chunk (`stream_options.include_usage`); turn off for servers that reject the option. */
  includeUsage?: boolean;
  /** Largest answer the model can produce; longer requests are capped. */
  maxCompletionTokens?: number;
  /** False for models that cannot stream: one JSON answer is read instead (it still arrives as events). */
  stream?: boolean;
  /** False for models without a system role (some Gemma, Mistral templates): the instructions lead the user message. */
  systemMessage?: boolean;
}

interface ChatChunk {
  choices?: {
    delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null };
    message?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: string | { message?: string; code?: unknown };
}

/**
 * Speaks the OpenAI chat-completions streaming protocol, which OpenAI, Azure OpenAI, vLLM, Ollama,
 * llama.cpp's server, LiteLLM and TGI all serve: `data: {chunk}` events carrying
 * `choices[0].delta.content`, an optional usage chunk, then `data: [DONE]`.
 */
export class OpenAiCompatibleGenerator implements Generator {
  readonly model: string;
  readonly structuredAnswers = true;
  readonly images = true;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiCompatibleGeneratorOptions) {
    this.model = options.model;
    const url = new URL(endpointUrl(options.url, '/chat/completions'));
    if (options.apiVersion) url.searchParams.set('api-version', options.apiVersion);
    this.endpoint = url.toString();
  }

  generate(req: GenerationRequest): AsyncIterable<GenerationEvent> {
    return this.stream(req);
  }

  private async *stream(req: GenerationRequest): AsyncGenerator<GenerationEvent> {
    const o = this.options;
    const wanted = req.maxAnswerTokens ?? o.defaultMaxTokens;
    const maxTokens = wanted && o.maxCompletionTokens ? Math.min(wanted, o.maxCompletionTokens) : wanted;
    const prompt = buildPrompt(fitContext(req, o.maxInputTokens));
    const withSystem = o.systemMessage !== false;
    const userText = withSystem ? prompt.user : `${prompt.system}\n\n${prompt.user}`;
    // With images the user message is a list of content parts: the text, then each image as a data URL.
    const userContent = req.images?.length
      ? [
          { type: 'text', text: userText },
          ...req.images.map((image) => ({ type: 'image_url', image_url: { url: `data:${image.mediaType};base64,${image.data}` } })),
        ]
      : userText;
    const messages = [
      ...(withSystem ? [{ role: 'system', content: prompt.system }] : []),
      ...prompt.history.map((turn) => ({ role: turn.author === 'USER' ? 'user' : 'assistant', content: turn.text })),
      { role: 'user', content: userContent },
    ];
    const stream = o.stream !== false;
    const body = {
      model: this.model,
      messages,
      stream,
      ...(stream && o.includeUsage !== false ? { stream_options: { include_usage: true } } : {}),
      ...(maxTokens ? { [o.maxTokensField ?? 'max_tokens']: maxTokens } : {}),
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      // Structured outputs: the content is then the JSON object, streamed like text.
      ...(req.answerJsonSchema
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: {
                name: req.answerJsonSchema.name,
                ...(req.answerJsonSchema.description ? { description: req.answerJsonSchema.description } : {}),
                schema: req.answerJsonSchema.schema,
              },
            },
          }
        : {}),
      ...(req.reasoning ? { reasoning_effort: req.reasoning.effort ?? 'medium' } : {}),
    };
    const authHeader: Record<string, string> = !o.key
      ? {}
      : o.auth === 'api-key'
        ? { 'api-key': o.key }
        : { authorization: `Bearer ${o.key}` };
    const provider = `generative provider ${new URL(this.endpoint).host}`;
    let usage: ChatChunk['usage'];
    let stopReason: string | undefined;
    let done = false;

    for await (const message of postForEvents({
      url: this.endpoint,
      headers: { ...authHeader, ...o.headers },
      body,
      timeoutMs: o.timeoutMs ?? 60_000,
      signal: req.signal,
      provider,
      http: o.http,
    })) {
      if (message.data === '[DONE]') {
        done = true;
        break;
      }
      const chunk = parseJson(message.data, provider) as ChatChunk;
      // The provider's own words are not passed on (see statusReason in platform/net).
      if (chunk.error) throw new GenerationError('provider', `${provider} reported an error mid-stream`);
      const choice = chunk.choices?.[0];
      const part = message.event === WHOLE_JSON_BODY ? choice?.message : choice?.delta;
      const reasoning = part?.reasoning_content ?? part?.reasoning;
      if (reasoning) yield { type: 'reasoning', text: reasoning };
      const text = part?.content;
      if (text) yield { type: req.answerJsonSchema ? 'json' : 'text', text };
      if (choice?.finish_reason) stopReason = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
      if (message.event === WHOLE_JSON_BODY) done = true;
    }
    // Servers that omit [DONE] (older llama.cpp) still end with a finish_reason; a stream with neither was cut.
    if (!done && !stopReason) throw new GenerationError('provider', `${provider} ended the stream before it finished`);
    if (usage || stopReason) {
      yield { type: 'metadata', inputTokens: usage?.prompt_tokens, outputTokens: usage?.completion_tokens, stopReason };
    }
  }
}
