import { Body, Controller, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, CreateEphemeralTokenDto, EphemeralTokenDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

const WHAT =
  "A signed, read-only token for the `eph-token` query parameter of the KB's download routes (file fields, extracted files such as thumbnails), " +
  'so a web page can link a file without a credential header. It lives `ttl` seconds (default 300, at most 900), opens nothing else, ' +
  'and stops working when its maker loses the KB (user) or is revoked (API key).';

/** Browser tokens for downloads (docs/security.md, "Ephemeral tokens"). */
@ApiTags('Knowledge Boxes')
@Controller('api/v1')
export class EphemeralTokensController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('account/:account_id/kb/:kb_id/ephemeral_tokens')
  @ApiOperation({ summary: 'Create Ephemeral Token', description: `${WHAT} For a user with a role on the KB, or the KB's API key.` })
  @ApiResponse({ status: 201, type: EphemeralTokenDto })
  create(
    @Param('kb_id') kbid: string,
    @Body(bodyOf(CreateEphemeralTokenDto)) body: CreateEphemeralTokenDto,
    @Req() req: AuthedRequest,
  ): Promise<EphemeralTokenDto> {
    const p = req.principal;
    const owner = p?.user_id ? { user_id: p.user_id } : { parent_key_id: p?.credential_id ?? '' };
    return this.bus.request(AccountsSubjects.createEphemeralToken, { kbid, ...owner, body }, busContextOf(req));
  }

  @Post('ephemeral_token')
  @ApiOperation({
    summary: 'Create Ephemeral Token From Sa',
    description: `${WHAT} With an API key (X-SVC-SERVICEACCOUNT), for the key's KB.`,
  })
  @ApiResponse({ status: 201, type: EphemeralTokenDto })
  createFromKey(
    @Body(bodyOf(CreateEphemeralTokenDto)) body: CreateEphemeralTokenDto,
    @Req() req: AuthedRequest,
  ): Promise<EphemeralTokenDto> {
    return this.bus.request(
      AccountsSubjects.createEphemeralToken,
      { kbid: req.principal?.kb_id ?? '', parent_key_id: req.principal?.credential_id ?? '', body },
      busContextOf(req),
    );
  }
}
