import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ActivityDownloadBody,
  AuditEventTypes,
  DomainError,
  ReportingSubjects,
  RequestActivityDownloadRequest,
  validatePayload,
  type ActivityDownloadDto,
  type ActivityDownloadFormat,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { contentDisposition } from '@kb/platform/storage';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';

const FORMATS: Record<string, ActivityDownloadFormat> = { 'application/x-ndjson': 'ndjson', 'text/csv': 'csv' };
const RECORD_SCHEMA = {
  type: 'object',
  properties: {
    request_id: { type: 'string', format: 'uuid' },
    download_type: { type: 'string', enum: ['query'] },
    download_format: { type: 'string', enum: ['ndjson', 'csv'] },
    event_type: { type: 'string' },
    requested_at: { type: 'string', format: 'date-time' },
    kb_id: { type: 'string' },
    download_url: {
      type: 'string',
      nullable: true,
      description: 'A link to the file, valid for an hour from this answer; null until the file is ready',
    },
    status: { type: 'string', enum: ['pending', 'running', 'done', 'failed'] },
    records: { type: 'integer', nullable: true },
    size_bytes: { type: 'integer', nullable: true },
    error: { type: 'string', nullable: true },
  },
};

/** The format an Accept header asks for: exactly one of the two file types (parameters such as charset aside). */
function formatOf(accept: string | undefined): ActivityDownloadFormat | undefined {
  const types = (accept ?? '')
    .split(',')
    .map((t) => t.split(';')[0]?.trim().toLowerCase() ?? '')
    .filter((t) => t in FORMATS);
  return types.length > 0 ? FORMATS[types[0] as string] : undefined;
}

/**
 * Activity log downloads of a Knowledge Box (spec 4.4, API-MAP §1.4), prepared by the reporting
 * service: a request (202), its status with the file's link, and the legacy month download.
 * Managers only, like the query: the files hold every caller's questions, answers and user ids.
 */
@ApiTags('Activity')
@Controller('api/v1/kb/:kbid/activity')
export class ActivityDownloadsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post(':event_type/query/download')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Request The Preparation Of Knowledgebox Activity Logs Download',
    description:
      'Records a download of every record the query matches (the body of Query Knowledgebox Activity Logs without `pagination`), as NDJSON or CSV per the Accept header. ' +
      'A background job writes the file; Get Download Status gives its link once ready. CSV: RFC 4180 with a header row and a UTF-8 byte order mark; nested values as JSON text. ' +
      'With `notify_via_email: true` and an `email_address`, a notice with the link is e-mailed once the file is ready (422 when the service has no SMTP configured). At most 5 downloads of a Knowledge Box are prepared at once (429 beyond). Files are kept 7 days.',
  })
  @ApiParam({ name: 'event_type', enum: [...AuditEventTypes] })
  @ApiHeader({ name: 'accept', required: true, enum: Object.keys(FORMATS) })
  @ApiBody({ type: ActivityDownloadBody })
  @ApiResponse({ status: 202, description: 'The download request record (spec 2.7)', schema: RECORD_SCHEMA })
  request(
    @Param('kbid') kbid: string,
    @Param('event_type') eventType: string,
    @Headers('accept') accept: string | undefined,
    @Body() body: unknown,
    @Req() req: AuthedRequest,
  ): Promise<ActivityDownloadDto> {
    const format = formatOf(accept);
    if (!format)
      throw DomainError.validation([{ loc: ['header', 'accept'], msg: 'Accept should be application/x-ndjson or text/csv', type: 'enum' }]);
    // The members a body may name depend on the path's event type: both are checked together by the
    // payload's class (one 422, `path.event_type` and `body.…`), which the bus checks again.
    const download = validatePayload(RequestActivityDownloadRequest, {
      kbid,
      event_type: eventType.toLowerCase(),
      format,
      body: body ?? {},
    });
    return this.bus.request(ReportingSubjects.requestActivityDownload, download, busContextOf(req));
  }

  @Get('download_request/:request_id')
  @ApiOperation({
    summary: 'Get Download Status',
    description: 'The download request record; `download_url` is set once the file is ready (a link valid for an hour from this answer).',
  })
  @ApiResponse({ status: 200, description: 'The download request record (spec 2.7)', schema: RECORD_SCHEMA })
  @ApiResponse({ status: 404, description: 'No such request for this Knowledge Box' })
  status(@Param('kbid') kbid: string, @Param('request_id') requestId: string, @Req() req: AuthedRequest): Promise<ActivityDownloadDto> {
    return this.bus.request(ReportingSubjects.activityDownloadStatus, { kbid, request_id: requestId }, busContextOf(req));
  }

  @Get('download')
  @ApiOperation({
    summary: 'Download Knowledgebox Activity',
    description: "Legacy: every member of one month's records of one event type, as CSV (header row, UTF-8 byte order mark), streamed.",
  })
  @ApiQuery({ name: 'type', required: true, enum: [...AuditEventTypes] })
  @ApiQuery({ name: 'month', required: true, schema: { type: 'string', pattern: '^\\d+-(0[1-9]|1[012])$' } })
  @ApiResponse({ status: 200, description: 'The records as CSV', content: { 'text/csv': { schema: { type: 'string' } } } })
  async month(
    @Param('kbid') kbid: string,
    @Query('type') type: unknown,
    @Query('month') month: unknown,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    const issues = [];
    if (typeof type !== 'string' || type === '') issues.push({ loc: ['query', 'type'], msg: 'Field required', type: 'missing' });
    if (typeof month !== 'string' || !/^\d+-(0[1-9]|1[012])$/.test(month))
      issues.push({ loc: ['query', 'month'], msg: 'month must be in the format YYYY-MM', type: 'string_pattern_mismatch' });
    if (issues.length > 0) throw DomainError.validation(issues);
    const stream = this.bus.requestStream(
      ReportingSubjects.activityMonthCsv,
      { kbid, event_type: type as string, month: month as string },
      busContextOf(req),
    );
    const iterator = stream[Symbol.asyncIterator]();
    // The request is checked before the first chunk: a bad one still gets a plain 422.
    const first = await iterator.next();
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', contentDisposition(`activity-${type as string}-${month as string}.csv`) as string);
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    try {
      for (let n = first; !n.done && !closed; n = await iterator.next()) if (n.value.text) res.write(n.value.text);
    } finally {
      if (closed) await iterator.return?.();
      res.end();
    }
  }
}
