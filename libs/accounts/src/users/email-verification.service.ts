import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { jwtVerify, SignJWT } from 'jose';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  type EmailVerificationDto,
  type EmailVerifiedDto,
  type UserRef,
  type VerifyEmailRequest,
} from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { VerificationMailer } from './verification-mailer';

const LINK_TTL_MS = 24 * 3600 * 1000;
const AUDIENCE = 'kb-email-verification';

/**
 * Proof that a user reads the mailbox of their address: a signed, expiring link naming the user and
 * the address, mailed to that address. Nothing matches a user on an address before it is verified
 * (invitations), and single sign-on never matches on addresses at all.
 * Without SMTP the link is returned to the caller (development): then it proves nothing, and the
 * operator documentation says so.
 */
@Injectable()
export class EmailVerificationService implements OnModuleDestroy {
  private readonly mailer?: VerificationMailer;

  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    if (options.smtp) this.mailer = new VerificationMailer(options.smtp);
  }

  onModuleDestroy(): void {
    this.mailer?.close();
  }

  /** A new link for the user's current address (a verified address gets none). */
  async send(ref: UserRef): Promise<EmailVerificationDto> {
    const rows: { email: string; email_verified_at: Date | null }[] = await this.ds.query(
      `SELECT email, email_verified_at FROM accounts.users WHERE id = $1`,
      [ref.user_id],
    );
    const user = rows[0];
    if (!user) throw new DomainError(ErrorCodes.USER_NOT_FOUND, 'User not found');
    if (user.email_verified_at) throw new DomainError(ErrorCodes.CONFLICT, `${user.email} is already verified`);
    return this.sendTo(ref.user_id, user.email);
  }

  async sendTo(userId: string, email: string): Promise<EmailVerificationDto> {
    const expires = new Date(Date.now() + LINK_TTL_MS);
    const token = await new SignJWT({ email })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setAudience(AUDIENCE)
      .setExpirationTime(Math.floor(expires.getTime() / 1000))
      .sign(this.key());
    const link = `${this.options.publicBaseUrl.replace(/\/+$/, '')}/auth/verify-email?token=${token}`;
    if (this.mailer) {
      try {
        await this.mailer.send({ to: email, link, expires });
        return { email, sent: true };
      } catch (err) {
        // Never fall back to handing the link to the caller: that would verify an address nobody read.
        this.logger.warn({ err: (err as Error).message, user_id: userId }, 'verification mail not sent; the user can ask for a new link');
        return { email, sent: false };
      }
    }
    this.logger.info({ user_id: userId }, 'e-mail verification link created (no SMTP configured: returned to the caller)');
    return { email, sent: false, verify_url: link };
  }

  /** Verifies the address the link was sent to, if it is still the user's address. */
  async verify(req: VerifyEmailRequest): Promise<EmailVerifiedDto> {
    const claims = await jwtVerify(req.token, this.key(), { audience: AUDIENCE, algorithms: ['HS256'] }).then(
      ({ payload }) => payload,
      () => null,
    );
    const userId = claims?.sub;
    const email = typeof claims?.['email'] === 'string' ? claims['email'] : undefined;
    if (!userId || !email) throw new DomainError(ErrorCodes.NOT_FOUND, 'This verification link is invalid or has expired');
    const rows: unknown[] = await this.ds.query(
      `UPDATE accounts.users SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = $1 AND email = $2 RETURNING id`,
      [userId, email],
    );
    if (firstResult(rows).length === 0)
      throw new DomainError(ErrorCodes.NOT_FOUND, "This verification link is for an address that is no longer this user's");
    return { user_id: userId, email };
  }

  private key(): Uint8Array {
    return new TextEncoder().encode(`email-verification:${this.options.secret}`);
  }
}

/** TypeORM's postgres driver returns `[rows, count]` for UPDATE … RETURNING. */
function firstResult(result: unknown[]): unknown[] {
  return Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
}
