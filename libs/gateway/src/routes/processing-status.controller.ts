import { Controller, Get, Inject, Param, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ContentSubjects, type ProcessingStatusPage } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { queryOf } from '../http/dto.pipe';
import { QueryBool, QueryInt } from '../http/query-transforms';
import { busContextOf } from '../http/request-context';

export class ProcessingStatusQuery {
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @IsOptional() @QueryBool() @IsBoolean() scheduled?: boolean;
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(100) limit?: number;
}

/** Processing status records of a Knowledge Box (API-MAP §3 "Processing status"; spec 2.7). */
@ApiTags('Processing')
@Controller('api/v1/kb/:kbid')
export class ProcessingStatusController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('processing-status')
  @ApiOperation({
    summary: 'Processing status of the Knowledge Box',
    description: 'One record per field processing job, newest first (`limit` default 20, at most 100; `cursor` from the previous page). `schedule_order` is the job\'s place in the queue (0 once completed), `schedule_eta` the seconds until it is expected to start.',
  })
  list(@Param('kbid') kbid: string, @Query(queryOf(ProcessingStatusQuery)) q: ProcessingStatusQuery, @Req() req: AuthedRequest): Promise<ProcessingStatusPage> {
    return this.bus.request(ContentSubjects.processingStatus, { kbid, ...q }, busContextOf(req));
  }
}
