import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, CreateNuaClientDto, ModifyNuaClientDto, NuaClientDto, NuaClientKeyDto, NuaClientListDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';
import { AnswersJsonNull } from '../http/json-null';

/** Understanding-API clients (UA keys) of an account, on the zone host. `:client_id` also takes the internal id. */
@ApiTags('Understanding-API clients')
@Controller('api/v1/account/:account_id')
export class NuaClientsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  private account(req: AuthedRequest, param: string): string {
    return req.grant?.account_id ?? param;
  }

  @Post('nua_clients')
  @ApiOperation({ summary: 'Create Account Nua Client' })
  @ApiResponse({ status: 201, type: NuaClientKeyDto })
  create(
    @Param('account_id') accountId: string,
    @Body(bodyOf(CreateNuaClientDto)) body: CreateNuaClientDto,
    @Req() req: AuthedRequest,
  ): Promise<NuaClientKeyDto> {
    return this.bus.request(AccountsSubjects.createNuaClient, { account_id: this.account(req, accountId), body }, busContextOf(req));
  }

  @Get('nua_clients')
  @ApiOperation({ summary: 'Get Account Nua Clients' })
  @ApiQuery({ name: 'client_id', required: false })
  @ApiResponse({ status: 200, type: NuaClientListDto })
  list(
    @Param('account_id') accountId: string,
    @Query('client_id') clientId: string | undefined,
    @Req() req: AuthedRequest,
  ): Promise<NuaClientListDto> {
    return this.bus.request(
      AccountsSubjects.listNuaClients,
      { account_id: this.account(req, accountId), ...(typeof clientId === 'string' ? { client_id: clientId } : {}) },
      busContextOf(req),
    );
  }

  @Get('nua_client/:client_id')
  @ApiOperation({ summary: 'Get Nua Client By Id' })
  @ApiResponse({ status: 200, type: NuaClientDto })
  get(@Param('account_id') accountId: string, @Param('client_id') client: string, @Req() req: AuthedRequest): Promise<NuaClientDto> {
    return this.bus.request(AccountsSubjects.getNuaClient, { account_id: this.account(req, accountId), client }, busContextOf(req));
  }

  @Patch('nua_client/:client_id')
  @ApiOperation({ summary: 'Update Nua Client' })
  @AnswersJsonNull('Changed: JSON null')
  modify(
    @Param('account_id') accountId: string,
    @Param('client_id') client: string,
    @Body(bodyOf(ModifyNuaClientDto)) body: ModifyNuaClientDto,
    @Req() req: AuthedRequest,
  ): Promise<null> {
    return this.bus.request(
      AccountsSubjects.modifyNuaClient,
      { account_id: this.account(req, accountId), client, body },
      busContextOf(req),
    );
  }

  @Delete('nua_client/:client_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Nua Client By Id (its key stops working at once)' })
  async delete(@Param('account_id') accountId: string, @Param('client_id') client: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteNuaClient, { account_id: this.account(req, accountId), client }, busContextOf(req));
  }

  @Put('nua_client/:client_id/key')
  @HttpCode(201)
  @ApiOperation({ summary: 'Set Account Nua Client Key (the previous key stops working)' })
  @ApiResponse({ status: 201, type: NuaClientKeyDto })
  renew(@Param('account_id') accountId: string, @Param('client_id') client: string, @Req() req: AuthedRequest): Promise<NuaClientKeyDto> {
    return this.bus.request(AccountsSubjects.renewNuaClientKey, { account_id: this.account(req, accountId), client }, busContextOf(req));
  }
}
