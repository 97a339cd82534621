import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ContentSubjects, KbSynonymsDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';

/** A knowledge box's custom synonyms (API-MAP "Synonyms"), used by `with_synonyms` in /find and /search. */
@ApiTags('Search')
@Controller('api/v1/kb/:kbid')
export class SynonymsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('custom-synonyms')
  @ApiOperation({ summary: 'Get the custom synonyms', description: '`{synonyms: {}}` when none are set.' })
  @ApiResponse({ status: 200, type: KbSynonymsDto })
  get(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbSynonymsDto> {
    return this.bus.request(ContentSubjects.getSynonyms, { kbid }, busContextOf(req));
  }

  @Put('custom-synonyms')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Set the custom synonyms',
    description:
      'Replaces them all: `{synonyms: {term: [synonym…]}}` (at most 10,000 terms, 100 synonyms a term, 200 characters each). With `with_synonyms: true`, a keyword query containing a term (word or phrase, any case) also matches its synonyms.',
  })
  @ApiBody({ type: KbSynonymsDto })
  @ApiResponse({ status: 204 })
  async set(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.setSynonyms, { kbid, body: body ?? null }, busContextOf(req));
  }

  @Delete('custom-synonyms')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete the custom synonyms' })
  @ApiResponse({ status: 204 })
  async delete(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteSynonyms, { kbid }, busContextOf(req));
  }
}
