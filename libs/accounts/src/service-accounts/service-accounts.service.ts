import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type CreateServiceAccountKeyRequest,
  type CreateServiceAccountRequest,
  type IdDto,
  type KbRef,
  type ServiceAccountDto,
  type ServiceAccountKeyCreatedDto,
  type ServiceAccountKeyRef,
  type ServiceAccountRef,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { issueSecret } from '../credentials/secret-tokens';
import type { ServiceAccountEntity } from '../entities/service-account.entity';
import { KbsRepository } from '../kbs/kbs.repository';
import { ServiceAccountsRepository } from './service-accounts.repository';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

/** Longest lifetime accepted for an API key. */
const MAX_KEY_LIFETIME_MS = 5 * 366 * 24 * 3600 * 1000;

@Injectable()
export class ServiceAccountsService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
    private readonly repo: ServiceAccountsRepository,
    private readonly kbs: KbsRepository,
  ) {}

  async list(ref: KbRef): Promise<ServiceAccountDto[]> {
    await this.kbs.requireInAccount(ref);
    const accounts = await this.repo.listByKb(ref.kb_id);
    const keys = await this.repo.listKeys(accounts.map((a) => a.id));
    return accounts.map((a) => ({
      id: a.id,
      title: a.title,
      role: a.role,
      keys: keys
        .filter((k) => k.ownerId === a.id)
        .map((k) => ({ id: k.id, created: k.createdAt.toISOString(), expires: k.expiresAt.toISOString() })),
    }));
  }

  async create(req: CreateServiceAccountRequest): Promise<IdDto> {
    await this.kbs.requireInAccount(req);
    const sa: ServiceAccountEntity = {
      id: randomUUID(),
      accountId: req.account_id,
      kbId: req.kb_id,
      title: req.body.title ?? '',
      role: req.body.role,
      createdAt: new Date(),
    };
    await this.repo.insert(sa);
    return { id: sa.id };
  }

  async delete(ref: ServiceAccountRef): Promise<Record<string, never>> {
    await this.requireServiceAccount(ref);
    await this.outbox.commit(this.ds, async (m) => {
      const revoked = await this.repo.delete(ref.sa_id, m);
      return {
        result: undefined,
        events: revoked.length > 0 ? [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: revoked })] : [],
      };
    });
    return {};
  }

  async createKey(req: CreateServiceAccountKeyRequest): Promise<ServiceAccountKeyCreatedDto> {
    await this.requireServiceAccount(req);
    const expires = new Date(req.body.expires);
    const now = Date.now();
    if (expires.getTime() <= now)
      throw DomainError.validation([{ loc: ['body', 'expires'], msg: 'expires must be in the future', type: 'value_error' }]);
    if (expires.getTime() - now > MAX_KEY_LIFETIME_MS)
      throw DomainError.validation([{ loc: ['body', 'expires'], msg: 'expires must be within five years', type: 'value_error' }]);
    return this.issueKey(req.sa_id, expires);
  }

  /** Issues a key for a service account; the token is returned once and only its hash is kept. */
  async issueKey(saId: string, expires: Date): Promise<ServiceAccountKeyCreatedDto> {
    const issued = issueSecret('api_key', this.options.secret);
    await this.repo.insertCredential({
      id: issued.id,
      kind: 'api_key',
      ownerId: saId,
      description: '',
      salt: issued.salt,
      secretHash: issued.hash,
      createdAt: new Date(),
      expiresAt: expires,
    });
    return { id: issued.id, token: issued.token };
  }

  async deleteKey(ref: ServiceAccountKeyRef): Promise<Record<string, never>> {
    await this.requireServiceAccount(ref);
    await this.outbox.commit(this.ds, async (m) => {
      if (!(await this.repo.deleteCredential(ref.key_id, ref.sa_id, m)))
        throw new DomainError(ErrorCodes.API_KEY_NOT_FOUND, 'API key not found');
      return { result: undefined, events: [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: [ref.key_id] })] };
    });
    return {};
  }

  private async requireServiceAccount(ref: ServiceAccountRef): Promise<void> {
    await this.kbs.requireInAccount(ref);
    if (!(await this.repo.find(ref.kb_id, ref.sa_id)))
      throw new DomainError(ErrorCodes.SERVICE_ACCOUNT_NOT_FOUND, 'Service account not found');
  }
}
