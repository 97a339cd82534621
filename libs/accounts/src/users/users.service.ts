import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type ModifyUserRequest,
  type SignedUpDto,
  type SignInRequest,
  type SignUpRequest,
  type UserProfileDto,
  type UserRef,
  type UserTokenDto,
} from '@kb/contracts';
import { asRow, translateUniqueViolation } from '@kb/platform/database';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { hashPassword, verifyPassword } from '../credentials/secret-tokens';
import { signUserToken } from '../credentials/user-tokens';
import { UserEntity } from '../entities/user.entity';
import { UsersRepository } from '../kbs/users.repository';
import { EmailVerificationService } from './email-verification.service';
import { SignInThrottle } from './sign-in-throttle';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

/** Verifying against this keeps a wrong e-mail as slow as a wrong password (no account probing by timing). */
let dummyHash: Promise<string> | undefined;

@Injectable()
export class UsersService {
  private readonly throttle: SignInThrottle;

  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly users: UsersRepository,
    private readonly verification: EmailVerificationService,
    private readonly outbox: AccountsOutbox,
  ) {
    this.throttle = new SignInThrottle(ds);
  }

  /** The user can work at once; their address counts for nothing (invitations, SSO) until they open the link mailed to it. */
  async signUp(req: SignUpRequest): Promise<SignedUpDto> {
    const email = req.body.email.toLowerCase();
    const user: UserEntity = {
      id: randomUUID(),
      email,
      name: req.body.name ?? '',
      passwordHash: await hashPassword(req.body.password),
      type: 'USER',
      language: null,
      avatar: null,
      createdAt: new Date(),
      lastLogin: new Date(),
      emailVerifiedAt: null,
    };
    await translateUniqueViolation(() => this.users.insertUser(user), {
      code: ErrorCodes.CONFLICT,
      message: 'An account with this e-mail address already exists; sign in instead',
    });
    const emailVerification = await this.verification.sendTo(user.id, email);
    return { ...(await this.issueToken(user.id)), email_verification: emailVerification };
  }

  async signIn(req: SignInRequest): Promise<UserTokenDto> {
    const email = req.body.email.toLowerCase();
    // Callers on the bus without an address (none today) share one budget: stricter, never looser.
    const client = req.ip ?? 'unknown';
    await this.throttle.assertAllowed(email, client);
    const user = await this.users.findUserByEmail(email);
    const stored = user?.passwordHash ?? (await (dummyHash ??= hashPassword('not-a-password')));
    const ok = (await verifyPassword(req.body.password, stored)) && user?.passwordHash !== null && user !== null;
    if (!ok || !user) {
      await this.throttle.recordFailure(email, client);
      throw new DomainError(ErrorCodes.UNAUTHENTICATED, 'Wrong e-mail address or password');
    }
    await this.throttle.recordSuccess(email, client);
    await this.ds.getRepository(UserEntity).update({ id: user.id }, { lastLogin: new Date() });
    return this.issueToken(user.id);
  }

  /** A user token for a user already authenticated another way (SSO, invitation acceptance). */
  async issueToken(userId: string): Promise<UserTokenDto> {
    const { token, expires } = await signUserToken(this.options.secret, userId, this.options.userTokenTtlSeconds);
    return { token, expires: expires.toISOString(), user_id: userId };
  }

  async profile(ref: UserRef): Promise<UserProfileDto> {
    const user = await this.requireUser(ref.user_id);
    const memberships: { slug: string; id: string; role: string; owners: string }[] = await this.ds.query(
      `SELECT a.id, a.slug, au.role,
              (SELECT count(*) FROM accounts.account_users o WHERE o.account_id = a.id AND o.role = 'AOWNER') AS owners
       FROM accounts.account_users au JOIN accounts.accounts a ON a.id = au.account_id WHERE au.user_id = $1 ORDER BY a.slug`,
      [user.id],
    );
    const dependant = memberships.filter((m) => m.role === 'AOWNER' && Number(m.owners) === 1).map((m) => ({ id: m.id, slug: m.slug }));
    return {
      preferences: {
        last_login: user.lastLogin?.toISOString() ?? null,
        email: user.email,
        name: user.name,
        type: user.type,
        language: user.language,
        avatar: user.avatar,
      },
      accounts: memberships.map((m) => m.slug),
      create: true,
      can_be_deleted: dependant.length === 0,
      dependant_accounts: dependant,
    };
  }

  /** A new e-mail address starts unverified and gets its own link (the reply stays the spec's null). */
  async modify(req: ModifyUserRequest): Promise<null> {
    const user = await this.requireUser(req.user_id);
    const b = req.body;
    const patch: Partial<UserEntity> = {};
    if (b.name !== undefined && b.name !== null) patch.name = b.name;
    if (b.avatar !== undefined) patch.avatar = b.avatar;
    if (b.language !== undefined) patch.language = b.language;
    const newEmail = b.email?.toLowerCase();
    if (newEmail && newEmail !== user.email) {
      patch.email = newEmail;
      patch.emailVerifiedAt = null;
    }
    if (Object.keys(patch).length > 0) {
      await translateUniqueViolation(() => this.ds.getRepository(UserEntity).update({ id: req.user_id }, asRow(patch)), {
        code: ErrorCodes.CONFLICT,
        message: 'Another user has this e-mail address',
      });
    }
    if (patch.email) await this.verification.sendTo(req.user_id, patch.email);
    return null;
  }

  /** Refused while the user is the only owner of an account (it would be left without one). */
  async delete(ref: UserRef): Promise<null> {
    const profile = await this.profile(ref);
    if (!profile.can_be_deleted) {
      throw new DomainError(
        ErrorCodes.CONFLICT,
        `You are the only owner of ${profile.dependant_accounts.map((a) => a.slug).join(', ')}: add another owner or delete the account first`,
        {
          dependant_accounts: profile.dependant_accounts,
        },
      );
    }
    await this.outbox.commit(this.ds, async (m) => {
      const tokens: { id: string }[] = await m.query(`SELECT id FROM accounts.secret_credentials WHERE owner_id = $1 AND kind = 'pat'`, [
        ref.user_id,
      ]);
      await m.query(`DELETE FROM accounts.secret_credentials WHERE owner_id = $1 AND kind = 'pat'`, [ref.user_id]);
      await m.delete(UserEntity, { id: ref.user_id });
      return {
        result: undefined,
        events: [
          ...(tokens.length > 0 ? [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: tokens.map((t) => t.id) })] : []),
          outboxEvent(AccountsSubjects.accessChanged, { user_ids: [ref.user_id] }),
        ],
      };
    });
    return null;
  }

  private async requireUser(userId: string): Promise<UserEntity> {
    const user = await this.users.findUser(userId);
    if (!user) throw new DomainError(ErrorCodes.USER_NOT_FOUND, 'User not found');
    return user;
  }
}
