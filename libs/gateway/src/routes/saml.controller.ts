import { Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AccountsSubjects, DomainError, ErrorCodes, SamlLoginDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';
import { errorBox, page, tokenPage } from './auth-page.html';

const formField = (req: AuthedRequest, name: string): string | undefined => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

const PAGE_STATUS: Record<string, number> = {
  [ErrorCodes.UNAUTHENTICATED]: 401,
  [ErrorCodes.NOT_FOUND]: 404,
  [ErrorCodes.ACCOUNT_NOT_FOUND]: 404,
  [ErrorCodes.QUOTA_EXCEEDED]: 403,
  [ErrorCodes.CONFLICT]: 409,
  [ErrorCodes.VALIDATION_FAILED]: 422,
};

/** SAML 2.0 service-provider endpoints of an account: metadata for the IdP, login redirect, assertion consumer. */
@ApiTags('SAML')
@Controller('api/v1/saml/:account_id')
export class SamlController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('metadata')
  @ApiOperation({ summary: 'SAML service-provider metadata of the account (entity id, ACS URL)' })
  @ApiProduces('application/samlmetadata+xml')
  @ApiResponse({
    status: 200,
    description: 'EntityDescriptor XML',
    content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
  })
  async metadata(@Param('account_id') accountId: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const { xml } = await this.bus.request(AccountsSubjects.samlMetadata, { account_id: accountId }, busContextOf(req));
    res.status(200).type('application/samlmetadata+xml').send(xml);
  }

  @Get('login')
  @ApiOperation({ summary: "Start single sign-on: redirects to the account's identity provider with an AuthnRequest" })
  @ApiResponse({ status: 302, description: "Location: the identity provider's SSO URL (HTTP-Redirect binding)" })
  async login(@Param('account_id') accountId: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    try {
      const { redirect_url } = await this.bus.request(AccountsSubjects.samlLogin, { account_id: accountId }, busContextOf(req));
      res.status(302).setHeader('Cache-Control', 'no-store').location(redirect_url).end();
    } catch (err) {
      this.errorPage(res, err);
    }
  }

  @Post('link')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Link single sign-on to the signed-in user: returns the identity provider's URL; the identity it answers for is attached to this user",
  })
  @ApiResponse({ status: 200, type: SamlLoginDto })
  link(@Param('account_id') accountId: string, @Req() req: AuthedRequest): Promise<SamlLoginDto> {
    return this.bus.request(AccountsSubjects.samlLink, { account_id: accountId, user_id: req.principal?.user_id ?? '' }, busContextOf(req));
  }

  @Post('acs')
  @ApiOperation({ summary: 'Assertion consumer: the identity provider posts its SAMLResponse here; answers with the user token page' })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiProduces('text/html')
  @ApiResponse({
    status: 200,
    description: 'Signed in: the page shows the user token',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 401, description: 'The response was refused (the page says which check failed)' })
  async acs(@Param('account_id') accountId: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const samlResponse = formField(req, 'SAMLResponse');
    if (!samlResponse)
      return this.errorPage(res, new DomainError(ErrorCodes.UNAUTHENTICATED, 'Single sign-on refused: no SAMLResponse was posted'));
    const relayState = formField(req, 'RelayState');
    try {
      const { token, expires } = await this.bus.request(
        AccountsSubjects.samlAcs,
        { account_id: accountId, saml_response: samlResponse, ...(relayState ? { relay_state: relayState.slice(0, 512) } : {}) },
        busContextOf(req),
      );
      res.status(200).setHeader('Cache-Control', 'no-store').type('html').send(tokenPage(token, expires));
    } catch (err) {
      this.errorPage(res, err);
    }
  }

  /** A person's browser lands here, so refusals are pages, not JSON. */
  private errorPage(res: Response, err: unknown): void {
    const status = err instanceof DomainError ? PAGE_STATUS[err.code] : undefined;
    // Anything else (bus timeouts, bugs) goes to the error filter and its usual status.
    if (!(err instanceof DomainError) || status === undefined) throw err;
    res
      .status(status)
      .setHeader('Cache-Control', 'no-store')
      .type('html')
      .send(
        page(
          'Single sign-on',
          `<h1>Single sign-on failed</h1>${errorBox(err.message)}<a class="button secondary" href="/auth">Back to sign-in</a>`,
        ),
      );
  }
}
