import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  LEARNING_DEFAULTS,
  type AccountCallerRef,
  type AccountDto,
  type AccountSummaryDto,
  type CreateAccountRequest,
  type IdDto,
  type ModifyAccountRequest,
  type UserRef,
} from '@kb/contracts';
import { asRow, translateUniqueViolation } from '@kb/platform/database';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { AccountUserEntity } from '../entities/account-user.entity';
import { AccountEntity } from '../entities/account.entity';
import { KbUserEntity } from '../entities/kb-user.entity';
import { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';
import { UsersRepository } from '../kbs/users.repository';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';
import { idpConfigOf } from '../saml/saml-assertion';
import { SamlDomainsService } from '../saml/saml-domains.service';
import { effectiveLimits } from './account-limits';

/** Accounts as their members see them. Owners (AOWNER) manage them. */
@Injectable()
export class AccountsService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
    private readonly users: UsersRepository,
    private readonly samlDomains: SamlDomainsService,
  ) {}

  /** A new account, its creator as owner, and its default Knowledge Box, in one transaction. */
  async create(req: CreateAccountRequest): Promise<IdDto> {
    const now = new Date();
    const account: AccountEntity = {
      id: randomUUID(),
      slug: req.body.slug,
      title: req.body.title ?? req.body.slug,
      description: req.body.description ?? '',
      type: 'stash-trial',
      domain: req.body.email?.split('@')[1]?.toLowerCase() ?? null,
      blockingState: 'unblocked',
      blockedFeatures: [],
      maxKbs: 10,
      maxUsers: 25,
      limits: {},
      createdAt: now,
      trialExpirationDate: new Date(now.getTime() + 30 * 24 * 3600 * 1000),
      samlConfig: null,
      samlEntityId: null,
      samlSsoUrl: null,
      samlX509Cert: null,
    };
    const kb: KnowledgeBoxEntity = {
      id: randomUUID(),
      accountId: account.id,
      slug: 'default',
      title: `${account.title} default`,
      description: '',
      state: 'PUBLISHED',
      zone: req.body.zone ?? this.options.zone,
      allowedOrigins: [],
      searchConfigs: {},
      externalIndexProvider: null,
      learningConfiguration: { ...LEARNING_DEFAULTS },
      createdAt: now,
    };
    await translateUniqueViolation(
      () =>
        this.outbox.commit(this.ds, async (m) => {
          await m.insert(AccountEntity, asRow(account));
          await m.insert(AccountUserEntity, { accountId: account.id, userId: req.user_id, role: 'AOWNER' });
          await m.insert(KnowledgeBoxEntity, asRow(kb));
          await m.insert(KbUserEntity, { kbId: kb.id, userId: req.user_id, role: 'SOWNER' });
          return { result: undefined, events: [outboxEvent(AccountsSubjects.kbCreated, { account_id: account.id, kb_id: kb.id })] };
        }),
      { code: ErrorCodes.ACCOUNT_SLUG_CONFLICT, message: `The account slug "${account.slug}" is taken` },
    );
    return { id: account.id };
  }

  async list(ref: UserRef): Promise<AccountSummaryDto[]> {
    const rows: { id: string; slug: string; title: string; type: string; role: 'AOWNER' | 'AMEMBER' }[] = await this.ds.query(
      `SELECT a.id, a.slug, a.title, a.type, au.role FROM accounts.account_users au JOIN accounts.accounts a ON a.id = au.account_id
       WHERE au.user_id = $1 ORDER BY a.created_at`,
      [ref.user_id],
    );
    return rows.map((r) => ({ ...r, can_manage_account: r.role === 'AOWNER' }));
  }

  async get(ref: AccountCallerRef): Promise<AccountDto> {
    const account = await this.require(ref.account);
    const role = await this.users.accountRole(account.id, ref.user_id);
    const counts: { users: string; kbs: string }[] = await this.ds.query(
      `SELECT (SELECT count(*) FROM accounts.account_users WHERE account_id = $1) AS users, (SELECT count(*) FROM accounts.knowledge_boxes WHERE account_id = $1) AS kbs`,
      [account.id],
    );
    return {
      id: account.id,
      slug: account.slug,
      title: account.title,
      description: account.description,
      domain: account.domain,
      type: account.type,
      can_manage_account: role === 'AOWNER',
      current_users: Number(counts[0]?.users ?? 0),
      max_users: account.maxUsers,
      current_kbs: Number(counts[0]?.kbs ?? 0),
      max_kbs: account.maxKbs,
      blocking_state: account.blockingState,
      blocked_features: account.blockedFeatures,
      limits: effectiveLimits(account.limits),
      creation_date: account.createdAt.toISOString(),
      trial_expiration_date: account.trialExpirationDate?.toISOString() ?? null,
      saml_entity_id: account.samlEntityId,
      saml_sso_url: account.samlSsoUrl,
      saml_x509_cert: account.samlX509Cert,
      saml_config: account.samlConfig ? { authn_context: 'exact', ...account.samlConfig } : null,
    };
  }

  async modify(req: ModifyAccountRequest): Promise<null> {
    const account = await this.require(req.account);
    const b = req.body;
    const patch: Partial<AccountEntity> = {};
    if (b.title !== undefined && b.title !== null) patch.title = b.title;
    if (b.description !== undefined && b.description !== null) patch.description = b.description;
    if (b.slug !== undefined && b.slug !== null) patch.slug = b.slug;
    if (b.saml_config !== undefined) {
      patch.samlConfig = b.saml_config ? { ...b.saml_config, domains: b.saml_config.domains.map((d) => d.toLowerCase()) } : null;
    }
    if (b.saml !== undefined) {
      patch.samlEntityId = b.saml?.entity_id ?? null;
      patch.samlSsoUrl = b.saml?.sso_url ?? null;
      patch.samlX509Cert = b.saml?.x509_cert ?? null;
      if (b.saml?.domain) patch.domain = b.saml.domain.toLowerCase();
    }
    // The IdP's domains become claims to verify; one another account verified is refused before anything changes.
    const samlChanged = b.saml_config !== undefined || b.saml !== undefined;
    const ssoDomains = samlChanged ? (idpConfigOf({ ...account, ...patch })?.domains ?? []) : [];
    if (samlChanged) await this.samlDomains.assertClaimable(account.id, ssoDomains);
    if (Object.keys(patch).length > 0) {
      await translateUniqueViolation(() => this.ds.getRepository(AccountEntity).update({ id: account.id }, asRow(patch)), {
        code: ErrorCodes.ACCOUNT_SLUG_CONFLICT,
        message: `The account slug "${b.slug}" is taken`,
      });
    }
    if (samlChanged) await this.samlDomains.sync(account.id, ssoDomains);
    return null;
  }

  /** Deletes the account and everything under it; content is told to delete each KB's data. */
  async delete(ref: AccountCallerRef): Promise<null> {
    const account = await this.require(ref.account);
    // The events commit with the deletion (outbox): a crash before they are published only delays
    // them, so every KB's content and blobs are still removed. The KBs and keys are read in the same
    // transaction, so a KB created meanwhile is not deleted without its event.
    await this.outbox.commit(this.ds, async (m) => {
      const kbs: { id: string }[] = await m.query(`SELECT id FROM accounts.knowledge_boxes WHERE account_id = $1 FOR UPDATE`, [account.id]);
      const keys: { id: string }[] = await m.query(
        `SELECT c.id FROM accounts.secret_credentials c JOIN accounts.service_accounts s ON s.id = c.owner_id WHERE s.account_id = $1 AND c.kind = 'api_key'`,
        [account.id],
      );
      await m.query(`DELETE FROM accounts.secret_credentials WHERE id = ANY($1::uuid[])`, [keys.map((k) => k.id)]);
      await m.delete(AccountEntity, { id: account.id });
      return {
        result: undefined,
        events: [
          ...(keys.length > 0 ? [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: keys.map((k) => k.id) })] : []),
          // Every gateway forgets the grants of its KBs, of its routes and of its credentials at once.
          outboxEvent(AccountsSubjects.accessChanged, { kb_ids: kbs.map((k) => k.id), account_ids: [account.id] }),
          ...kbs.map((kb) => outboxEvent(AccountsSubjects.kbDeleted, { account_id: account.id, kb_id: kb.id })),
          // Its backups (kept after their KBs are deleted) go with the account.
          outboxEvent(AccountsSubjects.accountDeleted, { account_id: account.id }),
        ],
      };
    });
    return null;
  }

  async require(idOrSlug: string): Promise<AccountEntity> {
    const account = await this.users.findAccount(idOrSlug);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    return account;
  }
}
