import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, DomainError, ModelConfigurationInputDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';

const objectBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw DomainError.validation([{ loc: ['body'], msg: 'Input should be a valid object', type: 'model_type' }]);
  return body as Record<string, unknown>;
};

/** Learning configuration schema and per-KB model configuration (spec 4.5–4.6). */
@ApiTags('Model configuration')
@Controller('api/v1')
export class ModelConfigController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('learning/configuration/schema')
  @ApiOperation({ summary: 'Learning Configuration Schema (for creation)' })
  schema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get('account/:account_id/schema')
  @ApiOperation({ summary: 'Learning Configuration Schema (by account)' })
  accountSchema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get('kb/:kbid/schema')
  @ApiOperation({ summary: 'Learning Configuration Schema (by KB, for update)' })
  kbSchema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get('kb/:kbid/configuration')
  @ApiOperation({ summary: 'Knowledgebox Models Configuration (provider keys masked)' })
  get(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.getKbConfig, { kb_id: kbid }, busContextOf(req));
  }

  @Post('kb/:kbid/configuration')
  @HttpCode(204)
  @ApiOperation({ summary: 'Knowledgebox Models Add Configuration' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 204 })
  async add(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'add', config: objectBody(body) }, busContextOf(req));
  }

  @Patch('kb/:kbid/configuration')
  @HttpCode(204)
  @ApiOperation({ summary: 'Knowledgebox Models Update Configuration (no semantic model changes)' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 204 })
  async update(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'update', config: objectBody(body) }, busContextOf(req));
  }
}
