import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthedRequest } from '../auth/auth.guard';
import { NotificationsHub } from '../notifications/notifications-hub';

/** Live notifications of a KB (docs/notifications.md). */
@ApiTags('Notifications')
@Controller('api/v1/kb/:kbid')
export class NotificationsController {
  constructor(private readonly hub: NotificationsHub) {}

  @Get('notifications')
  @ApiOperation({
    summary: 'Knowledge Box Notifications Stream',
    description:
      "A stream of the KB's activity from now on: each line is a base64-encoded JSON notification `{type, data}`, with `type` one of " +
      '`resource_written` (`data`: resource_uuid, resource_title, seqid, operation created|modified|deleted, error), `resource_processed` ' +
      '(resource_uuid, resource_title, seqid, ingestion_succeeded, processing_errors) and `resource_indexed` (resource_uuid, resource_title, seqid); ' +
      'also `heartbeat` (first line, then every 10 s) and a last `closed` (`data.reason`: max_duration after 2 minutes, slow_reader when the client ' +
      'reads too slowly to keep up, shutdown). At most 5 open streams per caller and 50 per KB (429 beyond).',
  })
  @ApiProduces('application/x-ndjson')
  @ApiResponse({
    status: 200,
    description: 'application/x-ndjson: one base64-encoded JSON notification per line',
    content: {
      'application/x-ndjson': { schema: { type: 'string', format: 'byte', description: 'One line: a base64-encoded JSON notification' } },
    },
  })
  @ApiResponse({ status: 429, description: 'Too many notification streams open for this caller or KB' })
  async stream(@Param('kbid') kbid: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const caller = req.principal?.user_id ?? req.principal?.id ?? '';
    const state: { gone: boolean; reader?: { abandon(): void } } = { gone: false };
    res.on('close', () => {
      state.gone = true;
      state.reader?.abandon();
    });
    const reader = await this.hub.open(kbid, caller, res, () => {
      res.status(200);
      res.setHeader('Content-Type', 'application/x-ndjson');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Accel-Buffering', 'no');
      res.flushHeaders();
    });
    state.reader = reader;
    if (state.gone) reader.abandon();
  }
}
