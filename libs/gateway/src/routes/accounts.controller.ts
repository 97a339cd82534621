import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AcceptInviteDto,
  AccountDto,
  AccountSummaryDto,
  AccountUserDto,
  AccountsSubjects,
  CreateAccountDto,
  IdDto,
  InviteAcceptedDto,
  InviteCreatedDto,
  InviteToAccountDto,
  InvitedUserDto,
  ModifyAccountDto,
  UpdateAccountUsersDto,
  DomainError,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';
import { AnswersJsonNull } from '../http/json-null';

/** Accounts on the global host. `:account_id` takes the account's id or slug. */
@ApiTags('Accounts')
@Controller('api/v1')
export class AccountsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  private caller(req: AuthedRequest, account: string) {
    return { account: req.grant?.account_id ?? account, user_id: req.principal?.user_id ?? '' };
  }

  @Post('accounts')
  @ApiOperation({ summary: 'Create Account (with its default Knowledge Box)' })
  @ApiResponse({ status: 201, type: IdDto })
  create(@Body(bodyOf(CreateAccountDto)) body: CreateAccountDto, @Req() req: AuthedRequest): Promise<IdDto> {
    return this.bus.request(AccountsSubjects.createAccount, { user_id: req.principal?.user_id ?? '', body }, busContextOf(req));
  }

  @Get('accounts')
  @ApiOperation({ summary: 'List my accounts' })
  @ApiResponse({ status: 200, type: [AccountSummaryDto] })
  list(@Req() req: AuthedRequest): Promise<AccountSummaryDto[]> {
    return this.bus.request(AccountsSubjects.listAccounts, { user_id: req.principal?.user_id ?? '' }, busContextOf(req));
  }

  @Get('account/:account_id')
  @ApiOperation({ summary: 'Get Account' })
  @ApiResponse({ status: 200, type: AccountDto })
  get(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<AccountDto> {
    return this.bus.request(AccountsSubjects.getAccount, this.caller(req, account), busContextOf(req));
  }

  @Patch('account/:account_id')
  @ApiOperation({ summary: 'Modify Account' })
  @AnswersJsonNull('Changed: JSON null')
  modify(
    @Param('account_id') account: string,
    @Body(bodyOf(ModifyAccountDto)) body: ModifyAccountDto,
    @Req() req: AuthedRequest,
  ): Promise<null> {
    return this.bus.request(AccountsSubjects.modifyAccount, { ...this.caller(req, account), body }, busContextOf(req));
  }

  @Delete('account/:account_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Account (its Knowledge Boxes, their content and keys go too)' })
  async delete(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteAccount, this.caller(req, account), busContextOf(req));
  }

  @Get('account/:account_id/users')
  @ApiOperation({ summary: 'List account users' })
  @ApiResponse({ status: 200, type: [AccountUserDto] })
  users(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<AccountUserDto[]> {
    return this.bus.request(AccountsSubjects.listAccountUsers, this.caller(req, account), busContextOf(req));
  }

  @Get('account/:account_id/users/search')
  @ApiOperation({ summary: 'Search Account Users' })
  @ApiQuery({ name: 'query', required: true })
  @ApiResponse({ status: 200, type: [AccountUserDto] })
  search(
    @Param('account_id') account: string,
    @Query('query') query: string | undefined,
    @Req() req: AuthedRequest,
  ): Promise<AccountUserDto[]> {
    if (typeof query !== 'string') throw DomainError.validation([{ loc: ['query', 'query'], msg: 'Field required', type: 'missing' }]);
    return this.bus.request(AccountsSubjects.searchAccountUsers, { ...this.caller(req, account), query }, busContextOf(req));
  }

  @Patch('account/:account_id/users')
  @ApiOperation({ summary: 'Update Users (account)' })
  @AnswersJsonNull('Changed: JSON null')
  updateUsers(
    @Param('account_id') account: string,
    @Body(bodyOf(UpdateAccountUsersDto)) body: UpdateAccountUsersDto,
    @Req() req: AuthedRequest,
  ): Promise<null> {
    return this.bus.request(AccountsSubjects.updateAccountUsers, { ...this.caller(req, account), body }, busContextOf(req));
  }

  @Post('account/:account_id/invite')
  @HttpCode(200)
  @ApiOperation({ summary: 'Invite To Account' })
  @ApiResponse({ status: 200, type: InviteCreatedDto })
  invite(
    @Param('account_id') account: string,
    @Body(bodyOf(InviteToAccountDto)) body: InviteToAccountDto,
    @Req() req: AuthedRequest,
  ): Promise<InviteCreatedDto> {
    return this.bus.request(AccountsSubjects.inviteToAccount, { ...this.caller(req, account), body }, busContextOf(req));
  }

  @Get('account/:account_id/invites')
  @ApiOperation({ summary: 'Pending invitations to the account' })
  @ApiResponse({ status: 200, type: [InvitedUserDto] })
  invites(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<InvitedUserDto[]> {
    return this.bus.request(AccountsSubjects.listAccountInvites, this.caller(req, account), busContextOf(req));
  }

  @Delete('account/:account_id/invite/:email')
  @HttpCode(204)
  @ApiOperation({ summary: 'Withdraw an invitation to the account' })
  async deleteInvite(@Param('account_id') account: string, @Param('email') email: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteAccountInvite, { ...this.caller(req, account), email }, busContextOf(req));
  }

  @Post('invites/accept')
  @HttpCode(200)
  @ApiOperation({ summary: 'Accept an invitation (the signed-in user must have the invited e-mail address)' })
  @ApiResponse({ status: 200, type: InviteAcceptedDto })
  accept(@Body(bodyOf(AcceptInviteDto)) body: AcceptInviteDto, @Req() req: AuthedRequest): Promise<InviteAcceptedDto> {
    return this.bus.request(AccountsSubjects.acceptInvite, { user_id: req.principal?.user_id ?? '', token: body.token }, busContextOf(req));
  }
}
