import { Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AccountsSubjects, DomainError, SignInDto, SignUpDto, collectIssues } from '@kb/contracts';
import { clientKey } from '../http/client-rate-limit';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { formField, pageStatusOf } from './page-form';
import { invitePage, inviteAcceptedPage } from './invite-page.html';

/** The invitation link's page: sign in or sign up with the invited address, then the role is granted. */
@ApiExcludeController()
@Controller('auth/invite')
export class InvitePageController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get()
  show(@Query('token') token: string | undefined, @Res() res: Response): void {
    if (!token) return this.html(res, 422, invitePage('', 'This invitation link is incomplete'));
    this.html(res, 200, invitePage(token));
  }

  @Post('login')
  async login(@Req() req: Request, @Res() res: Response): Promise<void> {
    const token = formField(req, 'token');
    const body = { email: formField(req, 'email'), password: formField(req, 'password') };
    if (collectIssues(SignInDto, body).issues.length > 0)
      return this.html(res, 422, invitePage(token, 'Enter your e-mail address and password'));
    await this.complete(res, token, () => this.bus.request(AccountsSubjects.signIn, { body, ip: clientKey(req.ip ?? '') }));
  }

  @Post('signup')
  async signUp(@Req() req: Request, @Res() res: Response): Promise<void> {
    const token = formField(req, 'token');
    const body = {
      email: formField(req, 'email'),
      password: formField(req, 'password'),
      ...(formField(req, 'name') ? { name: formField(req, 'name') } : {}),
    };
    const { issues } = collectIssues(SignUpDto, body);
    if (issues.length > 0) return this.html(res, 422, invitePage(token, issues.map((i) => i.msg).join('; ')));
    await this.complete(res, token, () => this.bus.request(AccountsSubjects.signUp, { body }));
  }

  private async complete(
    res: Response,
    inviteToken: string,
    authenticate: () => Promise<{ token: string; expires: string; user_id: string }>,
  ): Promise<void> {
    try {
      const user = await authenticate();
      const accepted = await this.bus.request(AccountsSubjects.acceptInvite, { user_id: user.user_id, token: inviteToken });
      this.html(res, 200, inviteAcceptedPage(accepted.role, user.token, user.expires));
    } catch (err) {
      this.html(res, pageStatusOf(err), invitePage(inviteToken, (err as DomainError).message));
    }
  }

  private html(res: Response, status: number, html: string): void {
    res.status(status).setHeader('Cache-Control', 'no-store').type('html').send(html);
  }
}
