import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, DomainError, ErrorCodes, type InviteCreatedDto } from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { InviteMailer } from './invite-mailer';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
const AUDIENCE = 'kb-invite';

export interface InviteTarget {
  accountId: string;
  kbId?: string;
  /** Human name for the mail: the account or KB title. */
  label: string;
}

export interface PendingInvite {
  email: string;
  role: string;
  expires: string;
}

/**
 * Invitations to an account or a KB: a row per pending invitation and a signed, expiring link that
 * names it. Accepting needs a signed-in user with the invited e-mail address, and grants the role.
 */
@Injectable()
export class InvitesService implements OnModuleDestroy {
  private readonly mailer?: InviteMailer;

  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly outbox: AccountsOutbox,
  ) {
    if (options.smtp) this.mailer = new InviteMailer(options.smtp);
  }

  onModuleDestroy(): void {
    this.mailer?.close();
  }

  async invite(target: InviteTarget, email: string, role: string, invitedBy?: string): Promise<InviteCreatedDto> {
    const id = randomUUID();
    const expires = new Date(Date.now() + INVITE_TTL_MS);
    const address = email.toLowerCase();
    // A new invitation replaces a pending one for the same address and target.
    await this.ds.transaction(async (m) => {
      await m.query(
        `DELETE FROM accounts.invites WHERE account_id = $1 AND kb_id IS NOT DISTINCT FROM $2 AND email = $3 AND accepted_at IS NULL`,
        [target.accountId, target.kbId ?? null, address],
      );
      await m.query(
        `INSERT INTO accounts.invites (id, email, account_id, kb_id, role, invited_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, address, target.accountId, target.kbId ?? null, role, invitedBy ?? null, expires],
      );
    });
    const link = `${this.options.publicBaseUrl.replace(/\/$/, '')}/auth/invite?token=${await this.sign(id, expires)}`;
    if (this.mailer) {
      try {
        await this.mailer.send({ to: address, target: target.label, role, link, expires });
        await this.ds.query(`UPDATE accounts.invites SET mailed_at = now() WHERE id = $1`, [id]);
        return { email: address, role, expires: expires.toISOString(), sent: true };
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'invitation mail not sent; returning the link to the inviter');
      }
    } else {
      this.logger.info(
        { invite_id: id, email_domain: address.split('@')[1] },
        'invitation created (no SMTP configured: link returned to the inviter)',
      );
    }
    return { email: address, role, expires: expires.toISOString(), sent: false, invite_url: link };
  }

  async pending(accountId: string, kbId?: string): Promise<PendingInvite[]> {
    const rows: { email: string; role: string; expires_at: Date }[] = await this.ds.query(
      `SELECT email, role, expires_at FROM accounts.invites WHERE account_id = $1 AND kb_id IS NOT DISTINCT FROM $2 AND accepted_at IS NULL AND expires_at > now() ORDER BY created_at`,
      [accountId, kbId ?? null],
    );
    return rows.map((r) => ({ email: r.email, role: r.role, expires: new Date(r.expires_at).toISOString() }));
  }

  async revoke(accountId: string, email: string, kbId?: string): Promise<void> {
    const rows: unknown[] = await this.ds.query(
      `WITH gone AS (DELETE FROM accounts.invites WHERE account_id = $1 AND kb_id IS NOT DISTINCT FROM $2 AND email = $3 AND accepted_at IS NULL RETURNING id) SELECT id FROM gone`,
      [accountId, kbId ?? null, email.toLowerCase()],
    );
    if (rows.length === 0) throw new DomainError(ErrorCodes.NOT_FOUND, 'No pending invitation for this address');
  }

  /**
   * Grants the invited role to `userId` if the link is valid, unused, unexpired and for that user's
   * address, and that address is verified. A link that went by mail is itself the proof (only the
   * mailbox got it), so accepting it verifies the address; a link handed to the inviter is not.
   */
  async accept(token: string, userId: string): Promise<{ account_id: string; kb_id?: string; role: string }> {
    const id = await this.verify(token);
    const result = await this.outbox.commit(this.ds, async (m) => {
      const rows: {
        email: string;
        account_id: string;
        kb_id: string | null;
        role: string;
        expires_at: Date;
        accepted_at: Date | null;
        mailed_at: Date | null;
      }[] = await m.query(
        `SELECT email, account_id, kb_id, role, expires_at, accepted_at, mailed_at FROM accounts.invites WHERE id = $1 FOR UPDATE`,
        [id],
      );
      const invite = rows[0];
      if (!invite || invite.accepted_at || new Date(invite.expires_at).getTime() <= Date.now()) {
        throw new DomainError(ErrorCodes.NOT_FOUND, 'This invitation has expired, was withdrawn or was already used');
      }
      const users: { email: string; email_verified_at: Date | null }[] = await m.query(
        `SELECT email, email_verified_at FROM accounts.users WHERE id = $1`,
        [userId],
      );
      const user = users[0];
      if (user?.email !== invite.email)
        throw new DomainError(ErrorCodes.FORBIDDEN, `This invitation is for ${invite.email}; sign in with that address`);
      if (!user.email_verified_at) {
        if (!invite.mailed_at) {
          throw new DomainError(
            ErrorCodes.FORBIDDEN,
            `Verify ${invite.email} first (open the link mailed to it, or ask for a new one with POST /api/v1/user/verify_email), then accept again`,
          );
        }
        await m.query(`UPDATE accounts.users SET email_verified_at = now() WHERE id = $1`, [userId]);
      }
      // Being invited to a KB also makes the user a member of its account.
      await m.query(
        `INSERT INTO accounts.account_users (account_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (account_id, user_id) DO ${invite.kb_id ? 'NOTHING' : 'UPDATE SET role = EXCLUDED.role'}`,
        [invite.account_id, userId, invite.kb_id ? 'AMEMBER' : invite.role],
      );
      if (invite.kb_id) {
        await m.query(
          `INSERT INTO accounts.kb_users (kb_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (kb_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
          [invite.kb_id, userId, invite.role],
        );
      }
      await m.query(`UPDATE accounts.invites SET accepted_at = now() WHERE id = $1`, [id]);
      return {
        result: { account_id: invite.account_id, ...(invite.kb_id ? { kb_id: invite.kb_id } : {}), role: invite.role },
        events: [outboxEvent(AccountsSubjects.accessChanged, { user_ids: [userId] })],
      };
    });
    return result;
  }

  private sign(id: string, expires: Date): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(id)
      .setAudience(AUDIENCE)
      .setExpirationTime(Math.floor(expires.getTime() / 1000))
      .sign(this.key());
  }

  private async verify(token: string): Promise<string> {
    try {
      const { payload } = await jwtVerify(token, this.key(), { audience: AUDIENCE, algorithms: ['HS256'] });
      if (!payload.sub) throw new Error('no subject');
      return payload.sub;
    } catch {
      throw new DomainError(ErrorCodes.NOT_FOUND, 'This invitation link is invalid or has expired');
    }
  }

  private key(): Uint8Array {
    return new TextEncoder().encode(`invite:${this.options.secret}`);
  }
}
