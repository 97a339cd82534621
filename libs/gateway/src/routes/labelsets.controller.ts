import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ContentSubjects, LabelSetDto, LabelSetsDto, EMPTY_OBJECT_SCHEMA } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

@ApiTags('Label sets')
@Controller('api/v1/kb/:kbid')
export class LabelSetsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('labelsets')
  @ApiOperation({ summary: 'List label sets' })
  @ApiResponse({ status: 200, type: LabelSetsDto })
  list(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<LabelSetsDto> {
    return this.bus.request(ContentSubjects.listLabelSets, { kbid }, busContextOf(req));
  }

  @Get('labelset/:labelset')
  @ApiOperation({ summary: 'Get a label set' })
  @ApiResponse({ status: 200, type: LabelSetDto })
  get(@Param('kbid') kbid: string, @Param('labelset') labelset: string, @Req() req: AuthedRequest): Promise<LabelSetDto> {
    return this.bus.request(ContentSubjects.getLabelSet, { kbid, labelset }, busContextOf(req));
  }

  @Post('labelset/:labelset')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create or replace a label set (label titles unique, case-insensitive)' })
  @ApiResponse({ status: 200, description: 'Stored: an empty object', schema: EMPTY_OBJECT_SCHEMA })
  set(
    @Param('kbid') kbid: string,
    @Param('labelset') labelset: string,
    @Body(bodyOf(LabelSetDto)) body: LabelSetDto,
    @Req() req: AuthedRequest,
  ): Promise<Record<string, never>> {
    return this.bus.request(ContentSubjects.setLabelSet, { kbid, labelset, body }, busContextOf(req));
  }

  @Delete('labelset/:labelset')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a label set' })
  async delete(@Param('kbid') kbid: string, @Param('labelset') labelset: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteLabelSet, { kbid, labelset }, busContextOf(req));
  }
}
