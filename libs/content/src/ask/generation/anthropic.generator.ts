import type { OutboundHttp } from '@kb/platform/net';
import { GenerationError, type ChatTurn, type GenerationEvent, type GenerationRequest, type Generator } from './generator';
import { buildPrompt, fitContext } from './prompt';
import { endpointUrl, parseJson, postForEvents } from './provider-stream';

export const ANTHROPIC_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicGeneratorOptions {
  /** Default https://api.anthropic.com; `/v1/messages` is appended. */
  url?: string;
  key: string;
  model: string;
  /** Longest wait for the response and between events (default 60 s). */
  timeoutMs?: number;
  /** The guarded outbound client (default: the process's). */
  http?: OutboundHttp;
  /** The `anthropic-version` header (default 2023-06-01). */
  version?: string;
  headers?: Record<string, string>;
  temperature?: number;
  /** `max_tokens` is required by the Messages API: used when the request names none (default 1024). */
  defaultMaxTokens?: number;
  maxInputTokens?: number;
}

interface MessagesEvent {
  type?: string;
  index?: number;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  content_block?: { type?: string; name?: string };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { input_tokens?: number; output_tokens?: number };
  error?: { type?: string; message?: string };
  /** Members of a whole (non-streamed) message. */
  content?: { type?: string; text?: string; thinking?: string; name?: string; input?: unknown }[];
  stop_reason?: string | null;
}

/** Thinking budget (tokens) of each reasoning effort when the request names no budget; `none` turns thinking off. */
const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 4096, high: 16_384, xhigh: 32_768 };

/** The Messages API request members for reasoning (extended thinking) and structured answers (a forced tool). */
function answerOptions(req: GenerationRequest, answerTokens: number, system: string): Record<string, unknown> {
  const budget =
    req.reasoning && req.reasoning.effort !== 'none'
      ? (req.reasoning.budgetTokens ?? EFFORT_BUDGET[req.reasoning.effort ?? 'medium'] ?? 4096)
      : undefined;
  const schema = req.answerJsonSchema;
  const out: Record<string, unknown> = { max_tokens: answerTokens + (budget ?? 0), system };
  if (budget) out['thinking'] = { type: 'enabled', budget_tokens: budget };
  if (schema) {
    out['tools'] = [
      { name: schema.name, description: schema.description ?? 'Gives the answer in the required structure.', input_schema: schema.schema },
    ];
    // Extended thinking cannot be combined with a forced tool: the model is then told to call it.
    out['tool_choice'] = budget ? { type: 'auto' } : { type: 'tool', name: schema.name };
    out['system'] = `${system}\n\nGive the answer by calling the tool ${schema.name}; its input is the answer.`;
  }
  return out;
}

/**
 * Speaks Anthropic's Messages streaming protocol: `message_start` (input usage),
 * `content_block_delta` events with `text_delta`s, `message_delta` (stop reason, output usage),
 * `message_stop`; `ping` keeps the connection alive and `error` ends it.
 */
export class AnthropicGenerator implements Generator {
  readonly model: string;
  readonly structuredAnswers = true;
  readonly images = true;
  private readonly endpoint: string;

  constructor(private readonly options: AnthropicGeneratorOptions) {
    this.model = options.model;
    const base = options.url ?? ANTHROPIC_URL;
    this.endpoint = endpointUrl(base, /\/v1\/?$/.test(new URL(base).pathname) ? '/messages' : '/v1/messages');
  }

  generate(req: GenerationRequest): AsyncIterable<GenerationEvent> {
    return this.stream(req);
  }

  private async *stream(req: GenerationRequest): AsyncGenerator<GenerationEvent> {
    const o = this.options;
    const prompt = buildPrompt(fitContext(req, o.maxInputTokens));
    const options = answerOptions(req, req.maxAnswerTokens ?? o.defaultMaxTokens ?? 1024, prompt.system);
    const body = {
      model: this.model,
      ...options,
      messages: withImages(alternatingMessages(prompt.history, prompt.user), req.images ?? []),
      stream: true,
      // Extended thinking accepts no temperature but the default.
      ...(o.temperature !== undefined && !options['thinking'] ? { temperature: o.temperature } : {}),
    };
    // The index of the answer tool's block: its input_json_delta chunks are the JSON answer.
    let toolBlock: number | undefined;
    const headers = { 'x-api-key': o.key, 'anthropic-version': o.version ?? ANTHROPIC_VERSION, ...o.headers };
    const provider = `generative provider ${new URL(this.endpoint).host}`;
    let inputTokens: number | undefined;
    let outputTokens: number | undefined;
    let stopReason: string | undefined;
    let stopped = false;

    for await (const message of postForEvents({
      url: this.endpoint,
      headers,
      body,
      timeoutMs: o.timeoutMs ?? 60_000,
      signal: req.signal,
      provider,
      http: o.http,
    })) {
      const event = parseJson(message.data, provider) as MessagesEvent;
      const type = event.type ?? message.event;
      if (type === 'error') {
        const kind = event.error?.type === 'overloaded_error' || event.error?.type === 'rate_limit_error' ? 'rate_limited' : 'provider';
        // The error's type picks the kind; its text, the provider's own words, is not passed on.
        throw new GenerationError(kind, `${provider} reported an error mid-stream (${kind === 'rate_limited' ? 'overloaded' : 'failed'})`);
      }
      if (type === 'message_start') {
        inputTokens = event.message?.usage?.input_tokens ?? inputTokens;
        outputTokens = event.message?.usage?.output_tokens ?? outputTokens;
      } else if (type === 'content_block_start') {
        if (event.content_block?.type === 'tool_use' && req.answerJsonSchema && event.content_block.name === req.answerJsonSchema.name)
          toolBlock ??= event.index;
      } else if (type === 'content_block_delta') {
        if (event.delta?.type === 'text_delta' && event.delta.text) yield { type: 'text', text: event.delta.text };
        else if (event.delta?.type === 'thinking_delta' && event.delta.thinking) yield { type: 'reasoning', text: event.delta.thinking };
        else if (
          event.delta?.type === 'input_json_delta' &&
          event.delta.partial_json &&
          toolBlock !== undefined &&
          event.index === toolBlock
        )
          yield { type: 'json', text: event.delta.partial_json };
      } else if (type === 'message_delta') {
        // message_delta usage is cumulative for the message.
        stopReason = event.delta?.stop_reason ?? stopReason;
        inputTokens = event.usage?.input_tokens ?? inputTokens;
        outputTokens = event.usage?.output_tokens ?? outputTokens;
      } else if (type === 'message_stop') {
        stopped = true;
        break;
      } else if (type === 'message') {
        // A proxy that ignored `stream: true` answers with the whole message.
        for (const block of event.content ?? []) {
          if (block.type === 'text' && block.text) yield { type: 'text', text: block.text };
          else if (block.type === 'thinking' && block.thinking) yield { type: 'reasoning', text: block.thinking };
          else if (block.type === 'tool_use' && req.answerJsonSchema && block.name === req.answerJsonSchema.name)
            yield { type: 'json', text: JSON.stringify(block.input ?? {}) };
        }
        stopReason = event.stop_reason ?? undefined;
        inputTokens = event.usage?.input_tokens;
        outputTokens = event.usage?.output_tokens;
        stopped = true;
      }
    }
    if (!stopped) throw new GenerationError('provider', `${provider} ended the stream before message_stop`);
    yield { type: 'metadata', inputTokens, outputTokens, stopReason };
  }
}

/** The last (user) message as content blocks: its text, then each image as a base64 source. */
function withImages(
  messages: { role: 'user' | 'assistant'; content: string }[],
  images: NonNullable<GenerationRequest['images']>,
): { role: 'user' | 'assistant'; content: unknown }[] {
  const last = messages[messages.length - 1];
  if (!images.length || !last) return messages;
  const blocks = [
    { type: 'text', text: last.content },
    ...images.map((image) => ({ type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } })),
  ];
  return [...messages.slice(0, -1), { role: last.role, content: blocks }];
}

/**
 * The Messages API wants user and assistant turns alternating and starting with the user:
 * consecutive turns of one author are merged and a leading assistant turn is dropped.
 */
export function alternatingMessages(history: ChatTurn[], user: string): { role: 'user' | 'assistant'; content: string }[] {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const turn of [...history, { author: 'USER' as const, text: user }]) {
    const role = turn.author === 'USER' ? 'user' : 'assistant';
    if (!turn.text.trim()) continue;
    const last = out[out.length - 1];
    if (last?.role === role) last.content += `\n\n${turn.text}`;
    else if (out.length || role === 'user') out.push({ role, content: turn.text });
  }
  return out;
}
