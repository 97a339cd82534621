import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RemiQueryBody, ReportingSubjects, type RemiEventResponse, type RemiQueryResponse, type RemiScoresResponse } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

const SCORES_SCHEMA = {
  type: 'object',
  properties: {
    answer_relevance: { type: 'object', properties: { score: { type: 'integer', minimum: 0, maximum: 5 }, reason: { type: 'string' } } },
    context_relevance: {
      type: 'array',
      items: { type: 'integer', minimum: 0, maximum: 5 },
      description: 'One score per context piece, in the order of the context',
    },
    groundedness: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 5 }, description: 'One score per answer sentence' },
  },
};

/**
 * REMi answer-quality scores of a Knowledge Box's `/ask` requests (spec 4.4, docs/remi.md),
 * answered by the reporting service. Managers only, like the activity log: the records carry every
 * caller's questions and answers.
 */
@ApiTags('REMi')
@Controller('api/v1/kb/:kbid/remi')
export class RemiController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('query')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Query Rag Requests By Scores',
    description:
      'Scored `/ask` requests of one UTC month in id order. Body: `month` (YYYY-MM, required); `context_relevance` `{value (0-5), operation (gt, ge, lt, le, eq), aggregation (average, min, max; default average)}` or null, ' +
      "compared with the aggregate of the request's context relevance scores; `feedback_good` (boolean or null); `status` (SUCCESS, ERROR, NO_CONTEXT or null); `pagination` `{limit (1-100, default 20), starting_after (record id)}`. " +
      'Requests are scored in the background, usually within seconds of the answer.',
  })
  @ApiBody({ type: RemiQueryBody })
  @ApiResponse({
    status: 200,
    schema: {
      type: 'object',
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: { type: 'integer' }, question: { type: 'string' }, answer: { type: 'string' }, remi: SCORES_SCHEMA },
          },
        },
        has_more: { type: 'boolean' },
      },
    },
  })
  query(
    @Param('kbid') kbid: string,
    @Body(bodyOf(RemiQueryBody)) body: RemiQueryBody,
    @Req() req: AuthedRequest,
  ): Promise<RemiQueryResponse> {
    return this.bus.request(ReportingSubjects.remiQuery, { kbid, body }, busContextOf(req));
  }

  @Get('scores')
  @ApiOperation({
    summary: 'Aggregated Remi Scores Across Time',
    description:
      'Minimum, maximum and average of each REMi score per UTC time bucket with scored requests: `answer_relevance`, `context_relevance` (per request, the average over its context) and `groundedness` (per request, the average over its sentences). ' +
      'At most 1000 buckets per call.',
  })
  @ApiQuery({
    name: 'aggregation',
    required: false,
    enum: ['hour', 'day', 'week', 'month', 'quarter', 'year', 'millennium'],
    description: 'Bucket size (default day)',
  })
  @ApiQuery({ name: 'from', required: true, description: 'date-time' })
  @ApiQuery({ name: 'to', required: false, description: 'date-time (default now)' })
  @ApiResponse({
    status: 200,
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          timestamp: { type: 'string', format: 'date-time' },
          metrics: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, min: { type: 'number' }, max: { type: 'number' }, average: { type: 'number' } },
            },
          },
        },
      },
    },
  })
  scores(
    @Param('kbid') kbid: string,
    @Query('aggregation') aggregation: unknown,
    @Query('from') from: unknown,
    @Query('to') to: unknown,
    @Req() req: AuthedRequest,
  ): Promise<RemiScoresResponse> {
    const one = (v: unknown) => (typeof v === 'string' ? v.slice(0, 100) : Array.isArray(v) ? String(v[0]).slice(0, 100) : undefined);
    return this.bus.request(
      ReportingSubjects.remiScores,
      { kbid, aggregation: one(aggregation), from: one(from), to: one(to) },
      busContextOf(req),
    );
  }

  @Get('events/:event_id')
  @ApiOperation({
    summary: 'Get Remi Event',
    description: 'One scored `/ask` request with its REMi scores and full context (the context relevance of each piece beside it).',
  })
  @ApiResponse({
    status: 200,
    schema: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        date: { type: 'string', format: 'date-time' },
        status: { type: 'string' },
        question: { type: 'string' },
        answer: { type: 'string' },
        context: { type: 'array', items: { type: 'object' } },
        remi: SCORES_SCHEMA,
        scorer: {
          type: 'string',
          description: "Who scored: `llm:<model>` (the KB's generative model as judge), `offline:en-use-lite-2024` or `offline:lexical`",
        },
        judge_error: {
          type: 'string',
          nullable: true,
          description:
            'Why the LLM judge did not score this answer of a KB with a generative provider (`timeout`, `rate_limited`, `auth`, `provider`, `bad_request`, `malformed`, `config`, `unavailable`); null when it did or was not asked',
        },
      },
    },
  })
  @ApiResponse({ status: 404, description: 'No scored request with this id in the Knowledge Box' })
  event(@Param('kbid') kbid: string, @Param('event_id') eventId: string, @Req() req: AuthedRequest): Promise<RemiEventResponse> {
    return this.bus.request(ReportingSubjects.remiEvent, { kbid, event_id: eventId.slice(0, 100) }, busContextOf(req));
  }
}
