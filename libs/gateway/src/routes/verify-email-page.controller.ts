import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { AccountsSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { errorBox, escape, page } from './auth-page.html';
import { pageStatusOf } from './page-form';

/** The page the e-mail verification link opens: the signed token in the link is all it needs. */
@ApiExcludeController()
@Controller('auth/verify-email')
export class VerifyEmailPageController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get()
  async verify(@Query('token') token: string | undefined, @Res() res: Response): Promise<void> {
    if (!token)
      return this.html(
        res,
        422,
        page('E-mail address', `<h1>E-mail address not verified</h1>${errorBox('This verification link is incomplete')}`),
      );
    try {
      const { email } = await this.bus.request(AccountsSubjects.verifyEmail, { token: token.slice(0, 4096) });
      this.html(
        res,
        200,
        page(
          'E-mail address verified',
          `<h1>E-mail address verified</h1><p id="verified">${escape(email)} is confirmed as yours.</p><a class="button" href="/auth">Sign in</a>`,
        ),
      );
    } catch (err) {
      this.html(res, pageStatusOf(err), page('E-mail address', `<h1>E-mail address not verified</h1>${errorBox((err as Error).message)}`));
    }
  }

  private html(res: Response, status: number, html: string): void {
    res.status(status).setHeader('Cache-Control', 'no-store').type('html').send(html);
  }
}
