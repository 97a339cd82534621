import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, DomainError, InviteCreatedDto, InviteToKbDto, InvitedUserDto, KbUserDto, UpdateKbUsersDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';
import { AnswersJsonNull } from '../http/json-null';

@ApiTags('Knowledge Boxes')
@Controller('api/v1/account/:account_id/kb/:kb_id')
export class KbUsersController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('users')
  @ApiOperation({ summary: 'Users (list KB users)' })
  @ApiQuery({ name: 'include_user_detail', required: false, type: Boolean })
  @ApiResponse({ status: 200, type: [KbUserDto] })
  list(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Query('include_user_detail') detail: string | undefined,
    @Req() req: AuthedRequest,
  ): Promise<KbUserDto[]> {
    return this.bus.request(
      AccountsSubjects.listKbUsers,
      { account_id: accountId, kb_id: kbId, include_user_detail: detail === 'true' },
      busContextOf(req),
    );
  }

  @Patch('users')
  @ApiOperation({ summary: 'Update Users (KB)' })
  @AnswersJsonNull('Changed: JSON null')
  update(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Body(bodyOf(UpdateKbUsersDto)) body: UpdateKbUsersDto,
    @Req() req: AuthedRequest,
  ): Promise<null> {
    return this.bus.request(AccountsSubjects.updateKbUsers, { account_id: accountId, kb_id: kbId, body }, busContextOf(req));
  }

  @Post('invite')
  @HttpCode(200)
  @ApiOperation({ summary: 'Invite To Knowledge Box' })
  @ApiResponse({ status: 200, type: InviteCreatedDto })
  invite(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Body(bodyOf(InviteToKbDto)) body: InviteToKbDto,
    @Req() req: AuthedRequest,
  ): Promise<InviteCreatedDto> {
    return this.bus.request(
      AccountsSubjects.inviteToKb,
      { account_id: accountId, kb_id: kbId, invited_by: req.principal?.user_id, body },
      busContextOf(req),
    );
  }

  @Get('invites')
  @ApiOperation({ summary: 'Invited Users' })
  @ApiResponse({ status: 200, type: [InvitedUserDto] })
  invites(@Param('account_id') accountId: string, @Param('kb_id') kbId: string, @Req() req: AuthedRequest): Promise<InvitedUserDto[]> {
    return this.bus.request(AccountsSubjects.listKbInvites, { account_id: accountId, kb_id: kbId }, busContextOf(req));
  }

  @Delete('invite')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Invite' })
  @ApiQuery({ name: 'email', required: true })
  async deleteInvite(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Query('email') email: string | undefined,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    if (typeof email !== 'string') throw DomainError.validation([{ loc: ['query', 'email'], msg: 'Field required', type: 'missing' }]);
    await this.bus.request(AccountsSubjects.deleteKbInvite, { account_id: accountId, kb_id: kbId, email }, busContextOf(req));
  }
}
