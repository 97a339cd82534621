import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  CreateKnowledgeBoxDto,
  IdDto,
  KnowledgeBoxDto,
  KnowledgeBoxSummaryDto,
  ModifyKnowledgeBoxDto,
  EMPTY_OBJECT_SCHEMA,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/** Knowledge Box management on the zone host (account layer paths of the reference system). */
@ApiTags('Knowledge Boxes')
@Controller('api/v1/account/:account_id')
export class KbsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('kbs')
  @ApiOperation({ summary: 'Create Knowledge Box' })
  @ApiResponse({ status: 201, type: IdDto })
  create(
    @Param('account_id') accountId: string,
    @Body(bodyOf(CreateKnowledgeBoxDto)) body: CreateKnowledgeBoxDto,
    @Req() req: AuthedRequest,
  ): Promise<IdDto> {
    return this.bus.request(
      AccountsSubjects.createKb,
      { account_id: req.grant?.account_id ?? accountId, actor_user_id: req.principal?.user_id, body },
      busContextOf(req),
    );
  }

  @Get('kbs')
  @ApiOperation({ summary: 'List Knowledge Boxes' })
  @ApiResponse({ status: 200, type: [KnowledgeBoxSummaryDto] })
  list(@Param('account_id') accountId: string, @Req() req: AuthedRequest): Promise<KnowledgeBoxSummaryDto[]> {
    return this.bus.request(
      AccountsSubjects.listKbs,
      { account_id: req.grant?.account_id ?? accountId, user_id: req.principal?.user_id },
      busContextOf(req),
    );
  }

  @Get('kb/:kb_id')
  @ApiOperation({ summary: 'Get Knowledge Box' })
  @ApiResponse({ status: 200, type: KnowledgeBoxDto })
  get(@Param('account_id') accountId: string, @Param('kb_id') kbId: string, @Req() req: AuthedRequest): Promise<KnowledgeBoxDto> {
    return this.bus.request(
      AccountsSubjects.getKb,
      { account_id: accountId, kb_id: kbId, caller_role: req.grant?.kb_role },
      busContextOf(req),
    );
  }

  @Patch('kb/:kb_id')
  @ApiOperation({ summary: 'Modify Knowledge Box' })
  @ApiResponse({ status: 200, description: 'Empty object', schema: EMPTY_OBJECT_SCHEMA })
  modify(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Body(bodyOf(ModifyKnowledgeBoxDto)) body: ModifyKnowledgeBoxDto,
    @Req() req: AuthedRequest,
  ): Promise<Record<string, never>> {
    return this.bus.request(AccountsSubjects.modifyKb, { account_id: accountId, kb_id: kbId, body }, busContextOf(req));
  }

  @Delete('kb/:kb_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Knowledge Box (its resources, vectors and blobs go too)' })
  @ApiResponse({ status: 204 })
  async delete(@Param('account_id') accountId: string, @Param('kb_id') kbId: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteKb, { account_id: accountId, kb_id: kbId }, busContextOf(req));
  }
}
