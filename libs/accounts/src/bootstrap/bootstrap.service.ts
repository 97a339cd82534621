import { asRow } from '@kb/platform/database';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, LEARNING_DEFAULTS } from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { operatorLimits } from '../accounts/account-limits';
import { generatePassword, hashPassword, issueSecret } from '../credentials/secret-tokens';
import { AccountUserEntity } from '../entities/account-user.entity';
import { AccountEntity } from '../entities/account.entity';
import { KbUserEntity } from '../entities/kb-user.entity';
import { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';
import { SecretCredentialEntity } from '../entities/secret-credential.entity';
import { ServiceAccountEntity } from '../entities/service-account.entity';
import { UserEntity } from '../entities/user.entity';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

export interface BootstrapResult {
  created_at: string;
  user: { id: string; email: string; password: string };
  personal_access_token: { id: string; token: string; expires: string };
  account: { id: string; slug: string };
  kb: { id: string; slug: string };
  service_account: { id: string; role: 'SOWNER' };
  api_key: { id: string; token: string; role: 'Manager'; expires: string };
}

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;

/**
 * First start of an empty deployment: an admin user, an account with its default KB, and a
 * Manager API key on that KB. Runs in one transaction, so a crash leaves nothing half made;
 * later starts find a user and do nothing.
 */
@Injectable()
export class BootstrapService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
  ) {}

  async ensure(adminEmail: string): Promise<BootstrapResult | null> {
    if ((await this.ds.getRepository(UserEntity).count()) > 0) return null;
    const now = new Date();
    const expires = new Date(now.getTime() + ONE_YEAR_MS);
    const password = generatePassword();
    const user: UserEntity = {
      id: randomUUID(),
      email: adminEmail.toLowerCase(),
      name: 'Administrator',
      passwordHash: await hashPassword(password),
      type: 'ROOT',
      language: null,
      avatar: null,
      createdAt: now,
      lastLogin: null,
      emailVerifiedAt: now,
    };
    const account: AccountEntity = {
      id: randomUUID(),
      slug: 'default',
      title: 'Default account',
      description: '',
      type: 'stash-trial',
      domain: null,
      blockingState: 'unblocked',
      blockedFeatures: [],
      maxKbs: 10,
      maxUsers: 25,
      limits: operatorLimits(),
      createdAt: now,
      trialExpirationDate: null,
      samlConfig: null,
      samlEntityId: null,
      samlSsoUrl: null,
      samlX509Cert: null,
    };
    const kb: KnowledgeBoxEntity = {
      id: randomUUID(),
      accountId: account.id,
      slug: 'default',
      title: 'Default Knowledge Box',
      description: '',
      state: 'PUBLISHED',
      zone: this.options.zone,
      allowedOrigins: [],
      searchConfigs: {},
      externalIndexProvider: null,
      learningConfiguration: { ...LEARNING_DEFAULTS },
      createdAt: now,
    };
    const sa: ServiceAccountEntity = {
      id: randomUUID(),
      accountId: account.id,
      kbId: kb.id,
      title: 'bootstrap',
      role: 'SOWNER',
      createdAt: now,
    };
    const apiKey = issueSecret('api_key', this.options.secret);
    const pat = issueSecret('pat', this.options.secret);

    try {
      await this.outbox.commit(this.ds, async (m) => {
        await m.insert(UserEntity, user);
        await m.insert(AccountEntity, asRow(account));
        await m.insert(AccountUserEntity, { accountId: account.id, userId: user.id, role: 'AOWNER' });
        await m.insert(KnowledgeBoxEntity, asRow(kb));
        await m.insert(KbUserEntity, { kbId: kb.id, userId: user.id, role: 'SOWNER' });
        await m.insert(ServiceAccountEntity, sa);
        await m.insert(SecretCredentialEntity, [
          {
            id: apiKey.id,
            kind: 'api_key',
            ownerId: sa.id,
            description: 'bootstrap',
            salt: apiKey.salt,
            secretHash: apiKey.hash,
            createdAt: now,
            expiresAt: expires,
          },
          {
            id: pat.id,
            kind: 'pat',
            ownerId: user.id,
            description: 'bootstrap',
            salt: pat.salt,
            secretHash: pat.hash,
            createdAt: now,
            expiresAt: expires,
          },
        ]);
        return { result: undefined, events: [outboxEvent(AccountsSubjects.kbCreated, { account_id: account.id, kb_id: kb.id })] };
      });
    } catch (err) {
      // Another replica bootstrapped at the same moment: theirs stands.
      if ((err as { code?: string }).code === '23505') return null;
      throw err;
    }
    return {
      created_at: now.toISOString(),
      user: { id: user.id, email: user.email, password },
      personal_access_token: { id: pat.id, token: pat.token, expires: expires.toISOString() },
      account: { id: account.id, slug: account.slug },
      kb: { id: kb.id, slug: kb.slug },
      service_account: { id: sa.id, role: 'SOWNER' },
      api_key: { id: apiKey.id, token: apiKey.token, role: 'Manager', expires: expires.toISOString() },
    };
  }
}
