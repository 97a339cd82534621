import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath, type ApiResponseOptions } from '@nestjs/swagger';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import {
  CompatChatCompletion,
  CompatChatCompletionChunk,
  CompatChatCompletionsBody,
  CompatEmbeddingsBody,
  CompatEmbeddingsResponse,
  CompatModelsResponse,
  ContentSubjects,
  DomainError,
  PREDICT_LIMITS,
  UnderstandingSubjects,
  ValidationErrorResponse,
  type PredictGenerateItem,
  type PredictGenerateRequest,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../../auth/auth.guard';
import { bodyOf } from '../../http/dto.pipe';
import { busContextOf } from '../../http/request-context';
import { generationFailure, PredictCalls, type CallOptions } from './predict-calls';
import { PredictUsage, TokenMeter, type PredictOutcome } from './predict-usage';
import { streamResponse } from '../stream-response';

/** The text of an OpenAI message: a string, or its text parts joined. */
function textOf(content: CompatChatCompletionsBody['messages'][number]['content'], loc: (string | number)[]): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => (p && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
  throw DomainError.validation([{ loc, msg: 'Input should be a string or a list of text parts', type: 'string_type' }]);
}

/** Floats as OpenAI's `encoding_format: base64`: little-endian float32, base64. */
export function base64Floats(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString('base64');
}

/** chat.completion JSON, or with `stream: true` server-sent events of chat.completion.chunk ending with `data: [DONE]`. */
const CHAT_RESPONSE: ApiResponseOptions = {
  status: 200,
  description:
    'chat.completion JSON, or text/event-stream of chat.completion.chunk events (`data: <chunk>`, last `data: [DONE]`) with stream: true',
  content: {
    'application/json': { schema: { $ref: getSchemaPath(CompatChatCompletion) } },
    // Each event's data is one chunk (the stream ends with `data: [DONE]`).
    'text/event-stream': { schema: { $ref: getSchemaPath(CompatChatCompletionChunk) } },
  },
};

/**
 * OpenAI-compatible predict routes (docs/predict.md): `compat/chat/completions` (JSON, or SSE
 * chunks with `stream: true`), `compat/embeddings` and `compat/models`, over the KB's models
 * (`/api/v1/kb/{kbid}/predict/compat/…`, Reader; `/api/v1/predict/compat/…/{kbid}` for
 * understanding-API keys of the KB's account) or the built-in ones (`/api/v1/predict/compat/…`,
 * understanding-API keys). The OpenAI SDKs work against them with `baseURL` set to `…/predict/compat`.
 */
@ApiTags('Predict')
@ApiExtraModels(CompatChatCompletion, CompatChatCompletionChunk)
@ApiResponse({ status: 422, type: ValidationErrorResponse, description: 'Every mistake of the request, each with its location' })
@Controller('api/v1')
export class PredictCompatController {
  private readonly calls: PredictCalls;

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly usage: PredictUsage,
  ) {
    this.calls = new PredictCalls(bus);
  }

  @Post('kb/:kbid/predict/compat/chat/completions')
  @HttpCode(200)
  @ApiOperation({ summary: "OpenAI-compatible chat completions (the KB's generative model)" })
  @ApiBody({ type: CompatChatCompletionsBody })
  @ApiResponse(CHAT_RESPONSE)
  kbChat(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CompatChatCompletionsBody)) body: CompatChatCompletionsBody,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.metered(req, kbid, 'compat/chat/completions', () => this.chat(kbid, body, busContextOf(req), res)).then(() => undefined);
  }

  @Post('predict/compat/chat/completions')
  @HttpCode(200)
  @ApiOperation({ summary: 'OpenAI-compatible chat completions (built-in model)' })
  @ApiBody({ type: CompatChatCompletionsBody })
  @ApiResponse(CHAT_RESPONSE)
  nuaChat(
    @Body(bodyOf(CompatChatCompletionsBody)) body: CompatChatCompletionsBody,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.metered(req, undefined, 'compat/chat/completions', () => this.chat(undefined, body, busContextOf(req), res)).then(
      () => undefined,
    );
  }

  @Post('predict/compat/chat/completions/:kbid')
  @HttpCode(200)
  @ApiOperation({ summary: "OpenAI-compatible chat completions for a KB of the understanding-API key's account (its generative model)" })
  @ApiBody({ type: CompatChatCompletionsBody })
  @ApiResponse(CHAT_RESPONSE)
  nuaKbChat(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CompatChatCompletionsBody)) body: CompatChatCompletionsBody,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.kbChat(kbid, body, req, res);
  }

  @Post('kb/:kbid/predict/compat/embeddings')
  @HttpCode(200)
  @ApiOperation({ summary: "OpenAI-compatible embeddings (the KB's semantic models)" })
  @ApiBody({ type: CompatEmbeddingsBody })
  @ApiResponse({ status: 200, type: CompatEmbeddingsResponse })
  kbEmbeddings(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CompatEmbeddingsBody)) body: CompatEmbeddingsBody,
    @Req() req: AuthedRequest,
  ): Promise<CompatEmbeddingsResponse> {
    return this.metered(
      req,
      kbid,
      'compat/embeddings',
      async () => ({ out: await this.embeddings(kbid, body, busContextOf(req)) }),
      body,
    ).then((r) => r.out);
  }

  @Post('predict/compat/embeddings')
  @HttpCode(200)
  @ApiOperation({ summary: 'OpenAI-compatible embeddings (built-in model)' })
  @ApiBody({ type: CompatEmbeddingsBody })
  @ApiResponse({ status: 200, type: CompatEmbeddingsResponse })
  nuaEmbeddings(
    @Body(bodyOf(CompatEmbeddingsBody)) body: CompatEmbeddingsBody,
    @Req() req: AuthedRequest,
  ): Promise<CompatEmbeddingsResponse> {
    return this.metered(
      req,
      undefined,
      'compat/embeddings',
      async () => ({ out: await this.embeddings(undefined, body, busContextOf(req)) }),
      body,
    ).then((r) => r.out);
  }

  @Post('predict/compat/embeddings/:kbid')
  @HttpCode(200)
  @ApiOperation({ summary: "OpenAI-compatible embeddings for a KB of the understanding-API key's account (its semantic models)" })
  @ApiBody({ type: CompatEmbeddingsBody })
  @ApiResponse({ status: 200, type: CompatEmbeddingsResponse })
  nuaKbEmbeddings(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CompatEmbeddingsBody)) body: CompatEmbeddingsBody,
    @Req() req: AuthedRequest,
  ): Promise<CompatEmbeddingsResponse> {
    return this.kbEmbeddings(kbid, body, req);
  }

  @Get('kb/:kbid/predict/compat/models')
  @ApiOperation({ summary: "OpenAI-compatible model list (the KB's generative and semantic models)" })
  @ApiResponse({ status: 200, type: CompatModelsResponse })
  kbModels(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<CompatModelsResponse> {
    return this.models(kbid, busContextOf(req));
  }

  @Get('predict/compat/models')
  @ApiOperation({ summary: 'OpenAI-compatible model list (built-in models)' })
  @ApiResponse({ status: 200, type: CompatModelsResponse })
  nuaModels(@Req() req: AuthedRequest): Promise<CompatModelsResponse> {
    return this.models(undefined, busContextOf(req));
  }

  @Get('predict/compat/models/:kbid')
  @ApiOperation({ summary: "OpenAI-compatible model list of a KB of the understanding-API key's account" })
  @ApiResponse({ status: 200, type: CompatModelsResponse })
  nuaKbModels(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<CompatModelsResponse> {
    return this.models(kbid, busContextOf(req));
  }

  /**
   * A call that ran is metered once (docs/usage.md): the chats with their tokens (failed when the
   * model failed or the client left mid-stream); one refused or failed before answering is not.
   * `compat/models` runs no model and is not metered.
   */
  private async metered<T>(
    req: AuthedRequest,
    kbid: string | undefined,
    endpoint: string,
    call: () => Promise<T & { outcome?: PredictOutcome }>,
    body?: unknown,
  ): Promise<T> {
    const started = performance.now();
    const out = await call();
    this.usage.record(req, kbid, endpoint, started, out.outcome ?? {}, body);
    return out;
  }

  private async models(kbid: string | undefined, o: CallOptions): Promise<CompatModelsResponse> {
    const m = await this.bus.request(ContentSubjects.predictModels, { kbid }, o);
    const created = 0;
    return {
      object: 'list',
      data: [m.generative, ...m.semantic].map((id) => ({
        id,
        object: 'model' as const,
        created,
        owned_by: kbid ? `kb:${kbid}` : 'system',
      })),
    };
  }

  private async embeddings(kbid: string | undefined, body: CompatEmbeddingsBody, o: CallOptions): Promise<CompatEmbeddingsResponse> {
    const texts = typeof body.input === 'string' ? [body.input] : body.input;
    if (
      !Array.isArray(texts) ||
      texts.length === 0 ||
      texts.length > PREDICT_LIMITS.texts ||
      texts.some((t) => typeof t !== 'string' || t.length > PREDICT_LIMITS.text)
    ) {
      throw DomainError.validation([
        {
          loc: ['body', 'input'],
          msg: `Input should be a string or a list of 1 to ${PREDICT_LIMITS.texts} strings of at most ${PREDICT_LIMITS.text} characters`,
          type: 'value_error',
        },
      ]);
    }
    // A model name of the KB picks that vectorset; OpenAI's own names (clients' defaults) mean the KB's default.
    const models = await this.bus.request(ContentSubjects.predictModels, { kbid }, o);
    const vectorset = body.model && models.semantic.includes(body.model) ? body.model : undefined;
    let res;
    try {
      res = await this.bus.request(UnderstandingSubjects.predictEmbed, { kbid, texts, vectorset, input: 'passage' }, o);
    } catch (err) {
      throw generationFailure(err);
    }
    const tokens = texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
    return {
      object: 'list',
      data: res.vectors.map((v, index) => ({
        object: 'embedding',
        index,
        embedding: body.encoding_format === 'base64' ? base64Floats(v) : v,
      })),
      model: res.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }

  /** OpenAI messages as a generation: system/developer messages → system prompt, the last user message → question, the rest → history. */
  private request(kbid: string | undefined, body: CompatChatCompletionsBody): PredictGenerateRequest {
    const system: string[] = [];
    const turns: { author: 'USER' | 'NUCLIA'; text: string }[] = [];
    body.messages.forEach((m, i) => {
      const text = textOf(m.content, ['body', 'messages', i, 'content']);
      if (text.length > PREDICT_LIMITS.text)
        throw DomainError.validation([
          { loc: ['body', 'messages', i, 'content'], msg: `At most ${PREDICT_LIMITS.text} characters`, type: 'string_too_long' },
        ]);
      if (m.role === 'system' || m.role === 'developer') system.push(text);
      else turns.push({ author: m.role === 'user' ? 'USER' : 'NUCLIA', text });
    });
    const last = turns[turns.length - 1];
    if (!last || last.author !== 'USER' || !last.text.trim()) {
      throw DomainError.validation([
        { loc: ['body', 'messages'], msg: 'The last message must be a non-empty user message', type: 'value_error' },
      ]);
    }
    return {
      kbid,
      task: 'chat',
      question: last.text,
      context: [],
      chat_history: turns.slice(0, -1),
      system: system.length ? system.join('\n\n') : undefined,
      max_tokens: body.max_completion_tokens ?? body.max_tokens,
      seed: body.seed,
    };
  }

  /** The chat's answer, sent; resolves to what the generation amounted to (tokens; failed mid-stream or left by the client). */
  private async chat(
    kbid: string | undefined,
    body: CompatChatCompletionsBody,
    o: CallOptions,
    res: Response,
  ): Promise<{ outcome: PredictOutcome }> {
    const request = this.request(kbid, body);
    const id = `chatcmpl-${randomUUID().replace(/-/g, '')}`;
    const created = Math.floor(Date.now() / 1000);
    const finish = (stop?: string) => (stop === 'length' || stop === 'max_tokens' ? 'length' : 'stop');
    if (!body.stream) {
      const out = await this.calls.generateText(request, o);
      const input = out.done?.input_tokens ?? 0;
      const output = out.done?.output_tokens ?? 0;
      res.status(200).json({
        id,
        object: 'chat.completion',
        created,
        model: out.done?.model ?? body.model ?? 'extractive',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: out.text, refusal: null },
            logprobs: null,
            finish_reason: finish(out.done?.stop_reason),
          },
        ],
        usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
      });
      return { outcome: { input_tokens: input, output_tokens: output, model: out.done?.model } };
    }
    const iterator = this.calls.generate(request, o)[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (err) {
      throw generationFailure(err);
    }
    let model = body.model ?? 'extractive';
    const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
    const meter = new TokenMeter();
    let ended = false;
    let failed = false;
    await streamResponse(res, first, iterator, {
      contentType: 'text/event-stream',
      start: event(chunk({ role: 'assistant', content: '' }, null)),
      render: (value) => {
        const item = value as { type: string; text?: string; model?: string; stop_reason?: string };
        if (item.type === 'text' && item.text) return event(chunk({ content: item.text }, null));
        if (item.type !== 'done') return '';
        ended = true;
        meter.add(item as Extract<PredictGenerateItem, { type: 'done' }>);
        model = item.model ?? model;
        return event(chunk({}, finish(item.stop_reason)));
      },
      // Headers are gone: OpenAI's streams carry errors as an `error` event.
      finish: (failure) => {
        failed = failure !== undefined;
        return (
          (failure ? event({ error: { message: (generationFailure(failure.error) as Error).message, type: 'server_error' } }) : '') +
          'data: [DONE]\n\n'
        );
      },
    });
    return { outcome: { ...meter.outcome(), failed: failed || !ended } };
  }
}
