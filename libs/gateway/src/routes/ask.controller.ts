import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import {
  AskRequest,
  AskStreamLine,
  ContentSubjects,
  FeedbackRequest,
  ValidationErrorResponse,
  SummarizedResource,
  SummarizeRequest,
  SummarizeResponse,
  SyncAskResponse,
  type AskItem,
  EMPTY_OBJECT_SCHEMA,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { actorOf, busContextOf } from '../http/request-context';
import { streamResponse } from './stream-response';

const truthy = (v: unknown): boolean => String(v ?? '').toLowerCase() === 'true';

/** /ask answers an NDJSON stream of AskStreamLine, or one SyncAskResponse with `x-synchronous: true`. */
const ASK_RESPONSE = {
  status: 200,
  description: 'application/x-ndjson: one {"item": AskItem} per line; application/json (x-synchronous: true): SyncAskResponse',
  content: {
    'application/x-ndjson': { schema: { $ref: getSchemaPath(AskStreamLine) } },
    'application/json': { schema: { $ref: getSchemaPath(SyncAskResponse) } },
  },
};

/** Folds the stream items into the SyncAskResponse of API-MAP 2.4 (`x-synchronous: true`). */
export function syncAskResponse(items: AskItem[], learningId: string): SyncAskResponse {
  const out: SyncAskResponse = { answer: '', status: 'success', learning_id: learningId, citations: {}, retrieval_best_matches: [] };
  let answer = '';
  let reasoning = '';
  for (const item of items) {
    switch (item.type) {
      case 'answer':
        answer += item.text;
        break;
      case 'reasoning':
        reasoning += item.text;
        break;
      case 'answer_json':
        out.answer_json = item.object;
        break;
      case 'relations':
        out.relations = item.relations;
        break;
      case 'retrieval':
        out.retrieval_results = item.results;
        out.retrieval_best_matches = item.best_matches;
        break;
      case 'prequeries':
        out.prequeries = item.results;
        break;
      case 'status':
        out.status = item.status;
        if (item.details) out.error_details = item.details;
        break;
      case 'augmented_context':
        out.augmented_context = item.augmented;
        break;
      case 'citations':
        out.citations = item.citations;
        break;
      case 'footnote_citations':
        out.citation_footnote_to_context = item.footnote_to_context;
        break;
      case 'metadata':
        out.metadata = { tokens: item.tokens, timings: item.timings };
        break;
      case 'consumption':
        out.consumption = { normalized_tokens: item.normalized_tokens, customer_key_tokens: item.customer_key_tokens };
        break;
      case 'debug':
        out.debug = { metadata: item.metadata, metrics: item.metrics };
        out.prompt_context = item.metadata?.prompt_context;
        break;
      case 'error':
        out.status = 'error';
        out.error_details = item.error;
        break;
    }
  }
  out.answer = answer;
  if (reasoning) out.reasoning = reasoning;
  return out;
}

/**
 * `/ask`: answers stream as NDJSON (`{"item": {...}}` per line) from the content service. The
 * first item is awaited before any header goes out, so a bad request still gets a plain 422.
 * Temporal keys with security groups reach these routes only, and their groups replace the body's.
 */
@ApiTags('Ask')
@ApiResponse({ status: 422, type: ValidationErrorResponse, description: 'Every mistake of the request, each with its location' })
@ApiExtraModels(AskStreamLine, SyncAskResponse, SummarizedResource)
@Controller('api/v1/kb/:kbid')
export class AskController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('ask')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ask Knowledge Box',
    description: 'Retrieval-augmented answer with citations, streamed as NDJSON unless x-synchronous is true.',
  })
  @ApiHeader({ name: 'x-synchronous', required: false, description: 'true → one JSON SyncAskResponse instead of the NDJSON stream' })
  @ApiHeader({ name: 'x-show-consumption', required: false, description: 'true → adds a consumption item' })
  @ApiBody({ type: AskRequest })
  @ApiResponse(ASK_RESPONSE)
  ask(
    @Param('kbid') kbid: string,
    @Body(bodyOf(AskRequest)) body: AskRequest,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.run(kbid, body, req, res, {});
  }

  @Post('resource/:rid/ask')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ask a resource (by id)' })
  @ApiBody({ type: AskRequest })
  @ApiResponse(ASK_RESPONSE)
  askResource(
    @Param('kbid') kbid: string,
    @Param('rid') rid: string,
    @Body(bodyOf(AskRequest)) body: AskRequest,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.run(kbid, body, req, res, { rid });
  }

  @Post('slug/:rslug/ask')
  @HttpCode(200)
  @ApiOperation({ summary: 'Ask a resource (by slug)' })
  @ApiBody({ type: AskRequest })
  @ApiResponse(ASK_RESPONSE)
  askSlug(
    @Param('kbid') kbid: string,
    @Param('rslug') slug: string,
    @Body(bodyOf(AskRequest)) body: AskRequest,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.run(kbid, body, req, res, { slug });
  }

  @Post('feedback')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send feedback on an answer',
    description: 'Good or bad, with an optional comment, on the answer of a learning id (the `nuclia-learning-id` header of /ask).',
  })
  @ApiBody({ type: FeedbackRequest })
  @ApiResponse({
    status: 200,
    description: 'Recorded: an empty object',
    schema: EMPTY_OBJECT_SCHEMA,
  })
  async feedback(
    @Param('kbid') kbid: string,
    @Body(bodyOf(FeedbackRequest)) body: FeedbackRequest,
    @Req() req: AuthedRequest,
  ): Promise<Record<string, never>> {
    return this.bus.request(ContentSubjects.feedback, { kbid, body, actor: actorOf(req) }, busContextOf(req));
  }

  @Post('summarize')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Summarize resources',
    description: 'A summary of each named resource and one of them together: the generative model, else the built-in extractive summaries.',
  })
  @ApiBody({ type: SummarizeRequest })
  @ApiResponse({ status: 200, type: SummarizeResponse })
  @ApiResponse({ status: 404, description: 'A named resource is not in the KB' })
  summarize(
    @Param('kbid') kbid: string,
    @Body(bodyOf(SummarizeRequest)) body: SummarizeRequest,
    @Req() req: AuthedRequest,
  ): Promise<SummarizeResponse> {
    return this.bus.request(ContentSubjects.summarize, { kbid, body, actor: actorOf(req) }, busContextOf(req));
  }

  private async run(
    kbid: string,
    body: AskRequest,
    req: AuthedRequest,
    res: Response,
    scope: { rid?: string; slug?: string },
  ): Promise<void> {
    const learningId = randomUUID().replace(/-/g, '');
    const groups = req.principal?.security_groups;
    const stream = this.bus.requestStream(
      ContentSubjects.ask,
      {
        kbid,
        body,
        ...scope,
        learning_id: learningId,
        actor: actorOf(req),
        show_consumption: truthy(req.headers['x-show-consumption']),
        ...(groups && groups.length ? { forced_groups: groups } : {}),
      },
      busContextOf(req),
    );
    const iterator = stream[Symbol.asyncIterator]();
    // Validation errors surface here, before any header is sent (the exception filter answers 422).
    const first = await iterator.next();
    res.setHeader('NUCLIA-LEARNING-ID', learningId);
    res.setHeader('X-SVC-LEARNING-ID', learningId);
    res.setHeader('Access-Control-Expose-Headers', 'NUCLIA-LEARNING-ID, X-SVC-LEARNING-ID');
    if (truthy(req.headers['x-synchronous'])) {
      const items: AskItem[] = first.done ? [] : [first.value];
      for (let n = await iterator.next(); !n.done; n = await iterator.next()) items.push(n.value);
      res.status(200).json(syncAskResponse(items, learningId));
      return;
    }
    await streamResponse(res, first, iterator, {
      contentType: 'application/x-ndjson',
      render: (item) => `${JSON.stringify({ item })}\n`,
      // Headers are gone: a failure becomes the stream's last item.
      finish: (failure) => (failure ? `${JSON.stringify({ item: { type: 'error', error: (failure.error as Error).message } })}\n` : ''),
    });
  }
}
