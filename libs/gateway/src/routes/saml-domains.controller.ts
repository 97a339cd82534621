import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, ClaimSamlDomainDto, SamlDomainDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/**
 * An account's claims on e-mail domains for single sign-on (AOWNER). A domain sends its users to the
 * account's identity provider only once the account proved it controls the domain's DNS.
 */
@ApiTags('SAML')
@Controller('api/v1/account/:account_id/saml/domains')
export class SamlDomainsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get()
  @ApiOperation({ summary: 'List the SSO domains of the account, with their status and the TXT record that proves each' })
  @ApiResponse({ status: 200, type: [SamlDomainDto] })
  list(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<SamlDomainDto[]> {
    return this.bus.request(AccountsSubjects.listSamlDomains, { account: req.grant?.account_id ?? account }, busContextOf(req));
  }

  @Post()
  @ApiOperation({ summary: 'Claim a domain for single sign-on (pending until verified); saml_config.domains are claimed automatically' })
  @ApiResponse({ status: 201, type: SamlDomainDto })
  @ApiResponse({ status: 409, description: 'Another account has verified this domain' })
  claim(
    @Param('account_id') account: string,
    @Body(bodyOf(ClaimSamlDomainDto)) body: ClaimSamlDomainDto,
    @Req() req: AuthedRequest,
  ): Promise<SamlDomainDto> {
    return this.bus.request(AccountsSubjects.claimSamlDomain, { account: req.grant?.account_id ?? account, body }, busContextOf(req));
  }

  @Post(':domain/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Look the TXT record up now: `kb-domain-verification=<token>` at `_kb-challenge.<domain>` or at the domain' })
  @ApiResponse({ status: 200, type: SamlDomainDto, description: 'status "verified", or "pending" while the record is not found' })
  @ApiResponse({ status: 404, description: 'The account has no claim on this domain' })
  @ApiResponse({ status: 409, description: 'Another account has verified this domain' })
  verify(@Param('account_id') account: string, @Param('domain') domain: string, @Req() req: AuthedRequest): Promise<SamlDomainDto> {
    return this.bus.request(AccountsSubjects.verifySamlDomain, { account: req.grant?.account_id ?? account, domain }, busContextOf(req));
  }
}
