import { Controller, Get, Header, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AccountsSubjects, DomainError, ErrorCodes, SignInDto, SignUpDto, collectIssues } from '@kb/contracts';
import { clientKey } from '../http/client-rate-limit';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { formField, pageStatusOf } from './page-form';
import { emailStep, passwordStep, signUpStep, ssoStep, tokenPage } from './auth-page.html';

/** The `{auth_url}` page: e-mail first, then password (or single sign-on), or sign-up. */
@ApiExcludeController()
@Controller('auth')
export class AuthPageController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  start(): string {
    return emailStep();
  }

  @Post()
  async continueWithEmail(@Req() req: Request, @Res() res: Response): Promise<void> {
    const email = formField(req, 'email');
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320) return this.html(res, 422, emailStep('Enter a valid e-mail address'));
    // An address in a domain with single sign-on signs in at its identity provider, not with a password.
    const sso = await this.bus.request(AccountsSubjects.discoverSso, { email }).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === ErrorCodes.VALIDATION_FAILED) return null;
      throw err;
    });
    if (!sso) return this.html(res, 422, emailStep('Enter a valid e-mail address'));
    this.html(res, 200, sso.account_id !== null ? ssoStep(email, sso.login_path) : passwordStep(email));
  }

  @Post('signup-form')
  signUpForm(@Req() req: Request, @Res() res: Response): void {
    this.html(res, 200, signUpStep(formField(req, 'email')));
  }

  @Post('login')
  async login(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = { email: formField(req, 'email'), password: formField(req, 'password') };
    if (collectIssues(SignInDto, body).issues.length > 0)
      return this.html(res, 422, passwordStep(body.email, 'Enter your e-mail address and password'));
    try {
      const { token, expires } = await this.bus.request(AccountsSubjects.signIn, { body, ip: clientKey(req.ip ?? '') });
      this.html(res, 200, tokenPage(token, expires));
    } catch (err) {
      this.html(res, pageStatusOf(err), passwordStep(body.email, (err as DomainError).message));
    }
  }

  @Post('signup')
  async signUp(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = {
      email: formField(req, 'email'),
      password: formField(req, 'password'),
      ...(formField(req, 'name') ? { name: formField(req, 'name') } : {}),
    };
    const { issues } = collectIssues(SignUpDto, body);
    if (issues.length > 0) return this.html(res, 422, signUpStep(body.email, issues.map((i) => i.msg).join('; ')));
    try {
      const { token, expires } = await this.bus.request(AccountsSubjects.signUp, { body });
      this.html(res, 201, tokenPage(token, expires));
    } catch (err) {
      this.html(res, pageStatusOf(err), signUpStep(body.email, (err as DomainError).message));
    }
  }

  private html(res: Response, status: number, html: string): void {
    res.status(status).setHeader('Cache-Control', 'no-store').type('html').send(html);
  }
}
