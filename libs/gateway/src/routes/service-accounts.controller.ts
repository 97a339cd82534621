import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  CreateServiceAccountDto,
  CreateServiceAccountKeyDto,
  IdDto,
  ServiceAccountDto,
  ServiceAccountKeyCreatedDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

@ApiTags('Service accounts')
@Controller('api/v1/account/:account_id/kb/:kb_id')
export class ServiceAccountsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('service_accounts')
  @ApiOperation({ summary: 'List Service Accounts' })
  @ApiResponse({ status: 200, type: [ServiceAccountDto] })
  list(@Param('account_id') accountId: string, @Param('kb_id') kbId: string, @Req() req: AuthedRequest): Promise<ServiceAccountDto[]> {
    return this.bus.request(AccountsSubjects.listServiceAccounts, { account_id: accountId, kb_id: kbId }, busContextOf(req));
  }

  @Post('service_accounts')
  @ApiOperation({ summary: 'Add Service Account' })
  @ApiResponse({ status: 201, type: IdDto })
  create(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Body(bodyOf(CreateServiceAccountDto)) body: CreateServiceAccountDto,
    @Req() req: AuthedRequest,
  ): Promise<IdDto> {
    return this.bus.request(AccountsSubjects.createServiceAccount, { account_id: accountId, kb_id: kbId, body }, busContextOf(req));
  }

  @Delete('service_account/:sa_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Service Account (its keys stop working at once)' })
  @ApiResponse({ status: 204 })
  async delete(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Param('sa_id') saId: string,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteServiceAccount, { account_id: accountId, kb_id: kbId, sa_id: saId }, busContextOf(req));
  }

  @Post('service_account/:sa_id/keys')
  @ApiOperation({ summary: 'Add Service Account Key' })
  @ApiResponse({ status: 201, type: ServiceAccountKeyCreatedDto })
  createKey(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Param('sa_id') saId: string,
    @Body(bodyOf(CreateServiceAccountKeyDto)) body: CreateServiceAccountKeyDto,
    @Req() req: AuthedRequest,
  ): Promise<ServiceAccountKeyCreatedDto> {
    return this.bus.request(
      AccountsSubjects.createServiceAccountKey,
      { account_id: accountId, kb_id: kbId, sa_id: saId, body },
      busContextOf(req),
    );
  }

  @Delete('service_account/:sa_id/key/:sa_key_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Api Key' })
  @ApiResponse({ status: 204 })
  async deleteKey(
    @Param('account_id') accountId: string,
    @Param('kb_id') kbId: string,
    @Param('sa_id') saId: string,
    @Param('sa_key_id') keyId: string,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(
      AccountsSubjects.deleteServiceAccountKey,
      { account_id: accountId, kb_id: kbId, sa_id: saId, key_id: keyId },
      busContextOf(req),
    );
  }
}
