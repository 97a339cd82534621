import { Controller, Get, Inject, Param, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountPermissionsDto,
  AccountStatusDto,
  AccountUserDto,
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  KbIndexDto,
  KbPermissionsDto,
  UserProfileDto,
  ZoneDto,
  kbRoleSatisfies,
  type RouteRole,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';

const ROUTE_ROLES: RouteRole[] = ['READER', 'WRITER', 'MANAGER'];

/**
 * The small global routes the reference clients call at sign-in and in account screens (API-MAP 1.3
 * "Related global routes"): the welcome record, zones, an account's status, the caller's
 * permissions, where each KB lives, one account user. The guard has already decided access; what it
 * resolved (the caller's account and KB roles) answers the permission routes without another call.
 */
@ApiTags('Accounts')
@Controller('api/v1')
export class AccountInfoController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  private accountOf(req: AuthedRequest, param: string): string {
    return req.grant?.account_id ?? param;
  }

  @Get('user/welcome')
  @ApiOperation({ summary: 'Welcome', description: 'The signed-in user as the clients read it after sign-in (the profile of GET /user).' })
  @ApiResponse({ status: 200, type: UserProfileDto })
  welcome(@Req() req: AuthedRequest): Promise<UserProfileDto> {
    return this.bus.request(AccountsSubjects.getUser, { user_id: req.principal?.user_id ?? '' }, busContextOf(req));
  }

  @Get('zones')
  @ApiOperation({ summary: 'List zones', description: 'The zones of this deployment: where new Knowledge Boxes go first.' })
  @ApiResponse({ status: 200, type: [ZoneDto] })
  zones(@Req() req: AuthedRequest): Promise<ZoneDto[]> {
    return this.bus.request(AccountsSubjects.listZones, {}, busContextOf(req));
  }

  @Get('account/:account_id/zones')
  @ApiOperation({
    summary: 'List the zones of an account',
    description: 'The zone new KBs of the account go to, and every zone one of its KBs lives in.',
  })
  @ApiResponse({ status: 200, type: [ZoneDto] })
  accountZones(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<ZoneDto[]> {
    return this.bus.request(AccountsSubjects.listZones, { account_id: this.accountOf(req, account) }, busContextOf(req));
  }

  @Get('account/:account_id/status')
  @ApiOperation({ summary: 'Account status', description: 'Whether the account is ready to use: accounts are ready once created.' })
  @ApiResponse({ status: 200, type: AccountStatusDto })
  status(): AccountStatusDto {
    return { available: true };
  }

  @Get('account/:account_id/permissions')
  @ApiOperation({ summary: "The caller's permissions on an account" })
  @ApiResponse({ status: 200, type: AccountPermissionsDto })
  accountPermissions(@Param('account_id') account: string, @Req() req: AuthedRequest): AccountPermissionsDto {
    const role = req.grant?.account_role;
    if (!role) throw new DomainError(ErrorCodes.FORBIDDEN, 'You are not a member of this account');
    return { account_id: this.accountOf(req, account), role, can_manage_account: role === 'AOWNER' };
  }

  @Get('account/:account_id/kb/:kb_id/permissions')
  @ApiOperation({
    summary: "The caller's permissions on a Knowledge Box",
    description: 'The KB role and the route roles (READER, WRITER, MANAGER) it grants.',
  })
  @ApiResponse({ status: 200, type: KbPermissionsDto })
  kbPermissions(@Param('account_id') account: string, @Param('kb_id') kb: string, @Req() req: AuthedRequest): KbPermissionsDto {
    const role = req.grant?.kb_role;
    if (!role) throw new DomainError(ErrorCodes.FORBIDDEN, 'No access to this Knowledge Box');
    return { account_id: this.accountOf(req, account), kb_id: kb, role, permissions: ROUTE_ROLES.filter((r) => kbRoleSatisfies(role, r)) };
  }

  @Get('account/:account_id/index/kbs')
  @ApiOperation({
    summary: 'Where the KBs of an account live',
    description: 'One {account_id, kb_id, zone_id} per KB the caller sees in the account.',
  })
  @ApiResponse({ status: 200, type: [KbIndexDto] })
  async kbIndex(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<KbIndexDto[]> {
    const accountId = this.accountOf(req, account);
    const kbs = await this.bus.request(
      AccountsSubjects.listKbs,
      { account_id: accountId, user_id: req.principal?.user_id },
      busContextOf(req),
    );
    return kbs.map((kb) => ({ account_id: accountId, kb_id: kb.id, zone_id: kb.zone }));
  }

  @Get('account/:account_id/user/:user_id')
  @ApiOperation({ summary: 'One user of an account' })
  @ApiResponse({ status: 200, type: AccountUserDto })
  @ApiResponse({ status: 404, description: 'Not a user of this account' })
  async accountUser(
    @Param('account_id') account: string,
    @Param('user_id') userId: string,
    @Req() req: AuthedRequest,
  ): Promise<AccountUserDto> {
    const users = await this.bus.request(
      AccountsSubjects.listAccountUsers,
      { account: this.accountOf(req, account), user_id: req.principal?.user_id ?? '' },
      busContextOf(req),
    );
    const user = users.find((u) => u.id === userId);
    if (!user) throw new DomainError(ErrorCodes.USER_NOT_FOUND, 'User not found in this account');
    return user;
  }
}
