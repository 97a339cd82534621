import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type CreatePersonalTokenRequest,
  type PersonalTokenCreatedDto,
  type PersonalTokenDto,
  type PersonalTokenRef,
  type UserRef,
} from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { issueSecret } from '../credentials/secret-tokens';
import { SecretCredentialEntity } from '../entities/secret-credential.entity';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;
const MAX_LIFETIME_MS = 5 * 366 * 24 * 3600 * 1000;

/** Personal access tokens: act as their user, one year by default. */
@Injectable()
export class PersonalTokensService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
  ) {}

  async create(req: CreatePersonalTokenRequest): Promise<PersonalTokenCreatedDto> {
    const now = Date.now();
    const expires = req.body.expiration_date ? new Date(req.body.expiration_date) : new Date(now + ONE_YEAR_MS);
    if (expires.getTime() <= now)
      throw DomainError.validation([
        { loc: ['body', 'expiration_date'], msg: 'expiration_date must be in the future', type: 'value_error' },
      ]);
    if (expires.getTime() - now > MAX_LIFETIME_MS)
      throw DomainError.validation([
        { loc: ['body', 'expiration_date'], msg: 'expiration_date must be within five years', type: 'value_error' },
      ]);
    const issued = issueSecret('pat', this.options.secret);
    await this.ds.getRepository(SecretCredentialEntity).insert({
      id: issued.id,
      kind: 'pat',
      ownerId: req.user_id,
      description: req.body.description,
      salt: issued.salt,
      secretHash: issued.hash,
      createdAt: new Date(now),
      expiresAt: expires,
    });
    return { id: issued.id, token: issued.token, expires: expires.toISOString() };
  }

  async list(ref: UserRef): Promise<PersonalTokenDto[]> {
    const rows = await this.ds
      .getRepository(SecretCredentialEntity)
      .find({ where: { ownerId: ref.user_id, kind: 'pat' }, order: { createdAt: 'ASC' } });
    return rows.map((r) => ({
      id: r.id,
      description: r.description,
      created: r.createdAt.toISOString(),
      expires: r.expiresAt.toISOString(),
    }));
  }

  async delete(ref: PersonalTokenRef): Promise<null> {
    await this.outbox.commit(this.ds, async (m) => {
      const result = await m.delete(SecretCredentialEntity, { id: ref.token_id, ownerId: ref.user_id, kind: 'pat' });
      if ((result.affected ?? 0) === 0) throw new DomainError(ErrorCodes.NOT_FOUND, 'Personal access token not found');
      return { result: undefined, events: [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: [ref.token_id] })] };
    });
    return null;
  }
}
