import { Body, Controller, Get, Inject, Param, Put, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  GetUsageQueryDto,
  ReportingSubjects,
  SetAccountLimitsDto,
  UsageBucketEntryDto,
  AccountLimitsDto,
  type EffectiveLimits,
  type UsageBucketDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf, queryOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/** Usage of an account (spec 4.3 Get Usage, API-MAP §1.3) and, for operators, its limits (spec 2.5, 8). */
@ApiTags('Accounts')
@Controller('api/v1/account/:account_id')
export class UsageController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('usage')
  @ApiOperation({
    summary: 'Get Usage',
    description:
      'Metered usage of the account, or of one of its Knowledge Boxes (`knowledgebox`), in UTC buckets (`aggregation`: hour, day, week (from Monday), month, quarter, year or millennium; default millennium) ' +
      'from the bucket holding `from` up to `to` (default now). Every bucket in the range is listed with every metric. At most 10 000 buckets per request (422 beyond). ' +
      "`resources`, `paragraphs_stored` and `storage_bytes` are the net change in the bucket. `nua_key_id` (an understanding-API client's internal id): only what that key caused — its pushes and the processing of what it pushed. Account owners (AOWNER) only.",
  })
  @ApiResponse({ status: 200, type: [UsageBucketEntryDto] })
  usage(
    @Param('account_id') account: string,
    @Query(queryOf(GetUsageQueryDto)) query: GetUsageQueryDto,
    @Req() req: AuthedRequest,
  ): Promise<UsageBucketDto[]> {
    return this.bus.request(
      ReportingSubjects.getUsage,
      {
        account_id: req.grant?.account_id ?? account,
        from: query.from,
        to: query.to ?? new Date().toISOString(),
        aggregation: query.aggregation ?? 'millennium',
        ...(query.knowledgebox ? { kb_id: query.knowledgebox } : {}),
        ...(query.nua_key_id ? { nua_key_id: query.nua_key_id.toLowerCase() } : {}),
      },
      busContextOf(req),
    );
  }

  @Put('limits')
  @ApiOperation({
    summary: 'Set Account Limits (operators)',
    description:
      "Operators (users of type ROOT) set an account's limits (spec 2.5): the members given replace the account's own, the others keep theirs; -1 is unlimited. " +
      'Blocks of limits no longer reached are lifted within moments, without a restart.',
  })
  @ApiResponse({ status: 200, type: AccountLimitsDto })
  setLimits(
    @Param('account_id') account: string,
    @Body(bodyOf(SetAccountLimitsDto)) body: SetAccountLimitsDto,
    @Req() req: AuthedRequest,
  ): Promise<EffectiveLimits> {
    return this.bus.request(AccountsSubjects.setAccountLimits, { account, user_id: req.principal?.user_id ?? '', body }, busContextOf(req));
  }
}
