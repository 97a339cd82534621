import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ActivityChainReport,
  ActivityQueryBody,
  ActivityQueryRequest,
  AuditEventTypes,
  DomainError,
  ReportingSubjects,
  validatePayload,
  type ValidationIssue,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';
import { streamResponse } from './stream-response';

const EVENT_TYPE = { name: 'event_type', enum: [...AuditEventTypes], description: 'Activity event type (spec 6.1)' };

/**
 * Activity logs of a Knowledge Box (spec 4.4, API-MAP §1.4), answered by the reporting service.
 * Managers only: the records carry every caller's questions, answers and user ids.
 */
@ApiTags('Activity')
@Controller('api/v1/kb/:kbid/activity/:event_type')
export class ActivityController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('query')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Query Knowledgebox Activity Logs',
    description:
      'Records of one event type in one UTC month, one JSON object per line (`application/x-ndjson`), in id order; the `has-more` header says whether more follow. ' +
      'Body: `year_month` (YYYY-MM, required); `show` (members to include, or "all"; empty: id, date and, for searches and chats, the question and answer; id and date are always included; `audit_metadata.<key>` picks one metadata key); ' +
      '`filters` (required; per member a comparison `{eq, gt, ge, lt, le, ne, isnull}`, strings also `like` and `ilike` with `%`/`_` wildcards and `\\` as escape; `audit_metadata`: a list of such comparisons with a `key`; `ne` keeps records without the member); ' +
      '`pagination` `{limit (0-1000, default 10), starting_after | ending_before (record ids)}`. At most 20 comparisons and 10 metadata filters; compared strings up to 1000 characters, patterns up to 200.',
  })
  @ApiParam(EVENT_TYPE)
  @ApiBody({ type: ActivityQueryBody })
  @ApiResponse({
    status: 200,
    description: 'application/x-ndjson: one activity record per line (members of spec 6.1)',
    headers: { 'has-more': { description: 'Whether more records follow', schema: { type: 'string', enum: ['true', 'false'] } } },
    content: {
      'application/x-ndjson': {
        schema: {
          type: 'object',
          additionalProperties: true,
          description: 'One line: an activity record with the members `show` asked for',
        },
      },
    },
  })
  async query(
    @Param('kbid') kbid: string,
    @Param('event_type') eventType: string,
    @Body() body: unknown,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    // The members a body may name depend on the path's event type: both are checked together by the
    // payload's class (one 422, `path.event_type` and `body.…`), which the bus checks again.
    const query = validatePayload(ActivityQueryRequest, { kbid, event_type: eventType.toLowerCase(), body: body ?? {} });
    const stream = this.bus.requestStream(ReportingSubjects.queryActivity, query, busContextOf(req));
    const iterator = stream[Symbol.asyncIterator]();
    // The request is checked before the first item: a bad one still gets a plain 422.
    const first = await iterator.next();
    const hasMore = !first.done && first.value.type === 'page' && first.value.has_more;
    await streamResponse(res, undefined, iterator, {
      contentType: 'application/x-ndjson',
      headers: { 'has-more': String(hasMore), 'Access-Control-Expose-Headers': 'has-more' },
      render: (item) => (item.type === 'record' ? `${JSON.stringify(item.record)}\n` : ''),
    });
  }

  @Get('months')
  @ApiOperation({
    summary: 'Get Knowledgebox Activity Downloads List',
    description: 'The months (YYYY-MM, UTC) in which the Knowledge Box has events of this type.',
  })
  @ApiParam(EVENT_TYPE)
  @ApiResponse({ status: 200, schema: { type: 'object', properties: { downloads: { type: 'array', items: { type: 'string' } } } } })
  months(@Param('kbid') kbid: string, @Param('event_type') eventType: string, @Req() req: AuthedRequest): Promise<{ downloads: string[] }> {
    return this.bus.request(ReportingSubjects.activityMonths, { kbid, event_type: eventType }, busContextOf(req));
  }

  @Get('verify')
  @ApiOperation({
    summary: 'Verify Knowledgebox Activity Chain',
    description:
      "Recomputes the hash chain of the Knowledge Box's records of this event type (each record's hash covers the previous one's and every member it was stored with) and reports the first broken link: " +
      'a record altered (`hash_mismatch`), a position without its record (`missing_record`), or an end that is not the recorded head (`head_mismatch`). ' +
      'At most `limit` records (default 100 000, up to 1 000 000) from `from_seq` (default 1); `next_seq` says where the next slice starts. Records stored in the last seconds may not be sealed yet (`unsealed`). ' +
      'An exported log (the query with `show` including `event_id`, `details`, `chain_seq` and `chain_hash`) can be verified offline with `npm run activity:verify` (docs/activity.md).',
  })
  @ApiParam(EVENT_TYPE)
  @ApiQuery({ name: 'from_seq', required: false, schema: { type: 'integer', minimum: 1 } })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 1_000_000 } })
  @ApiResponse({ status: 200, type: ActivityChainReport, description: 'The verification report' })
  @ApiResponse({ status: 429, description: 'Two verifications are running in this reporting process already' })
  verify(
    @Param('kbid') kbid: string,
    @Param('event_type') eventType: string,
    @Query('from_seq') fromSeq: unknown,
    @Query('limit') limit: unknown,
    @Req() req: AuthedRequest,
  ): Promise<ActivityChainReport> {
    const issues: ValidationIssue[] = [];
    const int = (value: unknown, name: string): number | undefined => {
      if (value === undefined) return undefined;
      if (typeof value === 'string' && /^\d{1,9}$/.test(value)) return Number(value);
      issues.push({ loc: ['query', name], msg: 'Input should be a valid integer', type: 'int_parsing' });
      return undefined;
    };
    const body = { kbid, event_type: eventType, from_seq: int(fromSeq, 'from_seq'), limit: int(limit, 'limit') };
    if (issues.length > 0) throw DomainError.validation(issues);
    return this.bus.request(ReportingSubjects.verifyActivityChain, body, busContextOf(req));
  }
}
