import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import {
  PREDICT_GET_ENDPOINTS,
  PREDICT_POST_ENDPOINTS,
  PredictChatBody,
  PredictQueryBody,
  PredictQueryResponse,
  PredictRemiBody,
  PredictRemiResponse,
  PredictRephraseBody,
  PredictRerankBody,
  PredictRerankResponse,
  PredictSentenceResponse,
  PredictSentencesBody,
  PredictSentencesResponse,
  PredictSummarizeBody,
  PredictSummarizeResource,
  PredictSummarizeResponse,
  PredictSummarizedResource,
  PredictTextQuery,
  PredictTokensResponse,
  ValidationErrorResponse,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../../auth/auth.guard';
import { busContextOf } from '../../http/request-context';
import { generationFailure, PredictCalls, type CallOptions } from './predict-calls';
import { PredictUsage, TokenMeter, type PredictOutcome } from './predict-usage';
import { streamResponse } from '../stream-response';

const GET_DESCRIPTION =
  `One of ${PREDICT_GET_ENDPOINTS.join(', ')}, with \`?text=\` (≤ 20 000 characters) and optional \`model\`/\`semantic_model\` (a semantic model of the KB). ` +
  '`sentence` → {data: vector, time}; `tokens` → {tokens: [{text, ner, start, end}], time}; `query` → {language, stop_words, semantic_threshold, semantic_thresholds, visual_llm, max_context, entities, sentence, query}.';
const POST_DESCRIPTION =
  `One of ${PREDICT_POST_ENDPOINTS.join(', ')}. Bodies: sentences {texts[≤100], model?} → {data: vectors, model, time}; query as GET; ` +
  'chat {question, query_context (list or map), chat_history, system, user_prompt, generative_model, max_tokens ≤ 4096} → NDJSON {"chunk": {type: text|meta|status}}; ' +
  'summarize {resources: {id: {fields: {id: text}}}} → {resources: {id: {summary, tokens}}, summary}; rephrase {question, context|chat_history} → a JSON string; ' +
  'rerank {question, context: {id: text}} → {context_scores}; remi {question?, answer?, contexts?} → {time, answer_relevance, context_relevance, groundedness}.';
const POST_BODIES = [
  PredictSentencesBody,
  PredictQueryBody,
  PredictChatBody,
  PredictSummarizeBody,
  PredictRephraseBody,
  PredictRerankBody,
  PredictRemiBody,
];
const RESPONSES = [
  PredictSentenceResponse,
  PredictSentencesResponse,
  PredictTokensResponse,
  PredictQueryResponse,
  PredictSummarizeResponse,
  PredictRerankResponse,
  PredictRemiResponse,
];

/**
 * The predict API (API-MAP 1.5, docs/predict.md): the KB's models as a service at
 * `/api/v1/kb/{kbid}/predict/{endpoint}` (Reader) and, for understanding-API keys of the KB's
 * account, `/api/v1/predict/{endpoint}/{kbid}`; the built-in models for understanding-API keys at
 * `/api/v1/predict/{endpoint}`. Every endpoint runs on the models the services already
 * use; nothing is stored.
 */
@ApiTags('Predict')
@ApiExtraModels(...POST_BODIES, ...RESPONSES, PredictSummarizeResource, PredictSummarizedResource)
@ApiResponse({ status: 422, type: ValidationErrorResponse, description: 'Every mistake of the request, each with its location' })
@Controller('api/v1')
export class PredictController {
  private readonly calls: PredictCalls;

  constructor(
    @Inject(MESSAGE_BUS) bus: MessageBus,
    private readonly usage: PredictUsage,
  ) {
    this.calls = new PredictCalls(bus);
  }

  // anyOf, not oneOf: which body or answer applies is decided by the endpoint in the path, and several shapes share members.
  @Get('kb/:kbid/predict/:endpoint')
  @ApiOperation({ summary: 'Predict API Proxy (GET)', description: GET_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_GET_ENDPOINTS })
  @ApiQuery({ type: PredictTextQuery })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [PredictSentenceResponse, PredictTokensResponse, PredictQueryResponse].map((c) => ({ $ref: getSchemaPath(c) })) },
  })
  kbGet(
    @Param('kbid') kbid: string,
    @Param('endpoint') endpoint: string,
    @Query() query: unknown,
    @Req() req: AuthedRequest,
  ): Promise<unknown> {
    return this.get(kbid, endpoint, query, req);
  }

  @Post('kb/:kbid/predict/:endpoint')
  @HttpCode(200)
  @ApiOperation({ summary: 'Predict API Proxy (POST)', description: POST_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_POST_ENDPOINTS })
  @ApiBody({ schema: { anyOf: POST_BODIES.map((c) => ({ $ref: getSchemaPath(c) })) } })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [...RESPONSES.map((c) => ({ $ref: getSchemaPath(c) })), { type: 'string', description: 'rephrase' }] },
  })
  kbPost(
    @Param('kbid') kbid: string,
    @Param('endpoint') endpoint: string,
    @Body() body: unknown,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.post(kbid, endpoint, body, req, res);
  }

  @Get('predict/:endpoint')
  @ApiOperation({ summary: 'Predict (understanding API, built-in models; GET)', description: GET_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_GET_ENDPOINTS })
  @ApiQuery({ type: PredictTextQuery })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [PredictSentenceResponse, PredictTokensResponse, PredictQueryResponse].map((c) => ({ $ref: getSchemaPath(c) })) },
  })
  nuaGet(@Param('endpoint') endpoint: string, @Query() query: unknown, @Req() req: AuthedRequest): Promise<unknown> {
    return this.get(undefined, endpoint, query, req);
  }

  @Post('predict/:endpoint')
  @HttpCode(200)
  @ApiOperation({ summary: 'Predict (understanding API, built-in models; POST)', description: POST_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_POST_ENDPOINTS })
  @ApiBody({ schema: { anyOf: POST_BODIES.map((c) => ({ $ref: getSchemaPath(c) })) } })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [...RESPONSES.map((c) => ({ $ref: getSchemaPath(c) })), { type: 'string', description: 'rephrase' }] },
  })
  nuaPost(@Param('endpoint') endpoint: string, @Body() body: unknown, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    return this.post(undefined, endpoint, body, req, res);
  }

  // The reference's `/{kbid}` variants (API-MAP 1.5): an understanding-API key's calls on a KB of its account, with the KB's models.
  @Get('predict/:endpoint/:kbid')
  @ApiOperation({ summary: "Predict for a KB of the understanding-API key's account (GET)", description: GET_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_GET_ENDPOINTS })
  @ApiQuery({ type: PredictTextQuery })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [PredictSentenceResponse, PredictTokensResponse, PredictQueryResponse].map((c) => ({ $ref: getSchemaPath(c) })) },
  })
  nuaKbGet(
    @Param('endpoint') endpoint: string,
    @Param('kbid') kbid: string,
    @Query() query: unknown,
    @Req() req: AuthedRequest,
  ): Promise<unknown> {
    return this.get(kbid, endpoint, query, req);
  }

  @Post('predict/:endpoint/:kbid')
  @HttpCode(200)
  @ApiOperation({ summary: "Predict for a KB of the understanding-API key's account (POST)", description: POST_DESCRIPTION })
  @ApiParam({ name: 'endpoint', enum: PREDICT_POST_ENDPOINTS })
  @ApiBody({ schema: { anyOf: POST_BODIES.map((c) => ({ $ref: getSchemaPath(c) })) } })
  @ApiResponse({
    status: 200,
    schema: { anyOf: [...RESPONSES.map((c) => ({ $ref: getSchemaPath(c) })), { type: 'string', description: 'rephrase' }] },
  })
  nuaKbPost(
    @Param('endpoint') endpoint: string,
    @Param('kbid') kbid: string,
    @Body() body: unknown,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.post(kbid, endpoint, body, req, res);
  }

  /** A call that answered is metered once (docs/usage.md); one refused or failed before answering is not. */
  private async get(kbid: string | undefined, endpoint: string, query: unknown, req: AuthedRequest): Promise<unknown> {
    const started = performance.now();
    const out = await this.calls.get(kbid, endpoint, query, busContextOf(req));
    this.usage.record(req, kbid, endpoint, started);
    return out;
  }

  private async post(kbid: string | undefined, endpoint: string, body: unknown, req: AuthedRequest, res: Response): Promise<void> {
    const started = performance.now();
    const o = { ...busContextOf(req), meter: new TokenMeter() };
    if (endpoint === 'chat') {
      const outcome = await this.chat(kbid, body, o, res, wantsNdjson(req.headers['accept']));
      this.usage.record(req, kbid, endpoint, started, outcome);
      return;
    }
    const out = await this.calls.post(kbid, endpoint, body, o);
    this.usage.record(req, kbid, endpoint, started, o.meter.outcome());
    res.status(200).json(out);
  }

  /**
   * `chat` with `Accept: application/x-ndjson` streams NDJSON lines `{"chunk": {...}}` (the
   * reference's GenerativeChunk): `text` chunks, then `meta` (tokens, timings) and `status` (code
   * "0"; "-1" with details when the model failed after the first chunk). Without it (as the
   * reference's synchronous clients call it), the answer streams as plain text followed by its
   * status code: `0`, or `-1` when the model failed after the first chunk. A failure before the
   * first chunk is an HTTP error either way. Resolves to what the generation amounted to (its
   * tokens; failed when the model failed or the client left before its end).
   */
  private async chat(kbid: string | undefined, body: unknown, o: CallOptions, res: Response, ndjson: boolean): Promise<PredictOutcome> {
    const started = performance.now();
    const request = this.calls.chatRequest(kbid, body);
    const iterator = this.calls.generate(request, o)[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (err) {
      throw generationFailure(err);
    }
    const learningId = randomUUID().replace(/-/g, '');
    const write = (chunk: Record<string, unknown>): string => {
      if (ndjson) return `${JSON.stringify({ chunk })}\n`;
      if (chunk['type'] === 'text') return String(chunk['text']);
      if (chunk['type'] === 'status') return String(chunk['code']);
      return '';
    };
    let firstChunk: number | undefined;
    const meter = new TokenMeter();
    let ended = false;
    let failed = false;
    await streamResponse(res, first, iterator, {
      contentType: ndjson ? 'application/x-ndjson' : 'text/plain; charset=utf-8',
      headers: { Vary: 'Accept', 'NUCLIA-LEARNING-ID': learningId, 'X-SVC-LEARNING-ID': learningId },
      render: (value) => {
        const item = value as { type: string; text?: string; input_tokens?: number; output_tokens?: number; model?: string };
        if (item.type === 'text' && item.text) {
          firstChunk ??= seconds(started);
          return write({ type: 'text', text: item.text });
        }
        if (item.type === 'reasoning') return write({ type: 'reasoning', text: item.text });
        if (item.type !== 'done') return '';
        ended = true;
        meter.add(item);
        return write({
          type: 'meta',
          input_tokens: item.input_tokens ?? 0,
          output_tokens: item.output_tokens ?? 0,
          timings: { generative_first_chunk: firstChunk ?? seconds(started), generative: seconds(started) },
        });
      },
      finish: (failure) => {
        failed = failure !== undefined;
        return write(
          failure
            ? { type: 'status', code: '-1', details: (generationFailure(failure.error) as Error).message }
            : { type: 'status', code: '0' },
        );
      },
    });
    return { ...meter.outcome(), failed: !ended || failed };
  }
}

const seconds = (since: number) => Math.round(performance.now() - since) / 1000;

/** Whether an `Accept` header asks for NDJSON chunks (else `chat` answers plain text and a status code). */
export function wantsNdjson(accept: string | string[] | undefined): boolean {
  const values = Array.isArray(accept) ? accept : accept ? [accept] : [];
  return values.some((v) => v.split(',').some((part) => part.split(';')[0]?.trim().toLowerCase() === 'application/x-ndjson'));
}
