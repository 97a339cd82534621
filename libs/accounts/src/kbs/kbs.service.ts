import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  LEARNING_DEFAULTS,
  kbRoleSatisfies,
  learningConfigurationIssues,
  type CreateKbRequest,
  type GetKbRequest,
  type IdDto,
  type KbRef,
  type KbRole,
  type KnowledgeBoxDto,
  type KnowledgeBoxSummaryDto,
  type KbCorsDto,
  type KbUploadLimitsDto,
  type ListKbsRequest,
  type ListZonesRequest,
  type ModifyKbRequest,
  type ZoneDto,
} from '@kb/contracts';
import { translateUniqueViolation } from '@kb/platform/database';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';
import type { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';
import { ServiceAccountsRepository } from '../service-accounts/service-accounts.repository';
import { effectiveLimits } from '../accounts/account-limits';
import { seal } from '../credentials/sealed';
import { KbsRepository } from './kbs.repository';
import { UsersRepository } from './users.repository';

@Injectable()
export class KbsService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
    private readonly kbs: KbsRepository,
    private readonly users: UsersRepository,
    private readonly serviceAccounts: ServiceAccountsRepository,
  ) {}

  async create(req: CreateKbRequest): Promise<IdDto> {
    return { id: (await this.createEntity(req)).id };
  }

  /** Creates the KB (the actor, if any, becomes its SOWNER) and returns its stored record. */
  async createEntity(req: CreateKbRequest): Promise<KnowledgeBoxEntity> {
    const account = await this.users.findAccount(req.account_id);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    if ((await this.kbs.countByAccount(account.id)) >= account.maxKbs) {
      throw new DomainError(ErrorCodes.QUOTA_EXCEEDED, `The account has reached its limit of ${account.maxKbs} Knowledge Boxes`);
    }
    const id = randomUUID();
    const body = req.body;
    const learning = body.learning_configuration ?? {};
    const issues = learningConfigurationIssues(learning, ['body', 'learning_configuration'], 'create');
    if (issues.length > 0) throw DomainError.validation(issues);
    const kb: KnowledgeBoxEntity = {
      id,
      accountId: account.id,
      slug: body.slug ?? id,
      title: body.title ?? body.slug ?? '',
      description: body.description ?? '',
      state: 'PUBLISHED',
      zone: this.options.zone,
      allowedOrigins: body.allowed_origins ?? [],
      searchConfigs: body.search_configs ?? {},
      externalIndexProvider:
        typeof body.external_index_provider?.['type'] === 'string' ? (body.external_index_provider['type'] as string) : null,
      learningConfiguration: {
        ...LEARNING_DEFAULTS,
        ...learning,
        ...(learning['user_keys'] ? { user_keys: seal(this.options.secret, learning['user_keys']) } : {}),
      },
      createdAt: new Date(),
    };
    await translateUniqueViolation(
      () =>
        this.outbox.commit(this.ds, async (m) => {
          await this.kbs.insert(kb, req.actor_user_id ? { userId: req.actor_user_id, role: 'SOWNER' } : undefined, m);
          return { result: undefined, events: [outboxEvent(AccountsSubjects.kbCreated, { account_id: account.id, kb_id: id })] };
        }),
      { code: ErrorCodes.KB_SLUG_CONFLICT, message: `A Knowledge Box with slug "${kb.slug}" already exists in this account` },
    );
    return kb;
  }

  async get(req: GetKbRequest): Promise<KnowledgeBoxDto> {
    return knowledgeBoxDto(await this.kbs.requireInAccount(req), req.caller_role);
  }

  /** The configured zone first (where new KBs go), then any other a KB lives in. */
  async zones(req: ListZonesRequest): Promise<ZoneDto[]> {
    const zones = [...new Set([this.options.zone, ...(await this.kbs.zones(req.account_id, 100))])];
    return zones.map((z) => ({ id: z, slug: z, title: z, subdomain: z }));
  }

  async list(req: ListKbsRequest): Promise<KnowledgeBoxSummaryDto[]> {
    const all = await this.kbs.listByAccount(req.account_id);
    const userRoles = req.user_id ? await this.kbs.rolesOfUser(req.user_id) : new Map<string, KbRole>();
    const accountRole = req.user_id ? await this.users.accountRole(req.account_id, req.user_id) : undefined;
    return all
      .filter(
        (kb) =>
          req.whole_account === true || (req.only_kb_id ? kb.id === req.only_kb_id : accountRole === 'AOWNER' || userRoles.has(kb.id)),
      )
      .map((kb) => knowledgeBoxSummary(kb, accountRole === 'AOWNER' ? 'SOWNER' : (userRoles.get(kb.id) ?? 'SMEMBER')));
  }

  async modify(req: ModifyKbRequest): Promise<Record<string, never>> {
    const kb = await this.kbs.requireInAccount(req);
    const b = req.body;
    const patch: Partial<KnowledgeBoxEntity> = {};
    if (b.slug !== undefined) patch.slug = b.slug;
    if (b.title !== undefined) patch.title = b.title;
    if (b.state !== undefined) patch.state = b.state;
    if (b.description !== undefined) patch.description = b.description;
    if (b.allowed_origins !== undefined) patch.allowedOrigins = b.allowed_origins;
    if (b.search_configs !== undefined) patch.searchConfigs = b.search_configs;
    // Gateways cache a KB's allowed origins: tell them (with the change, through the outbox).
    const events = b.allowed_origins !== undefined ? [outboxEvent(AccountsSubjects.accessChanged, { kb_ids: [kb.id] })] : [];
    if (Object.keys(patch).length > 0 || events.length > 0) {
      await translateUniqueViolation(
        () =>
          this.outbox.commit(this.ds, async (m) => {
            if (Object.keys(patch).length > 0) await this.kbs.update(kb.id, patch, m);
            return { result: undefined, events };
          }),
        { code: ErrorCodes.KB_SLUG_CONFLICT, message: `A Knowledge Box with slug "${b.slug}" already exists in this account` },
      );
    }
    return {};
  }

  async uploadLimits(kbId: string): Promise<KbUploadLimitsDto> {
    const kb = await this.kbs.findById(kbId);
    if (!kb) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
    const account = await this.users.findAccount(kb.accountId);
    return effectiveLimits(account?.limits).upload;
  }

  /** The upload limits of an account itself (understanding-API uploads wait outside any KB). */
  async accountUploadLimits(accountId: string): Promise<KbUploadLimitsDto> {
    const account = await this.users.findAccount(accountId);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    return effectiveLimits(account.limits).upload;
  }

  async cors(kbId: string): Promise<KbCorsDto> {
    const kb = await this.kbs.findById(kbId);
    return { kb_found: kb !== null, allowed_origins: kb?.allowedOrigins ?? [] };
  }

  async delete(req: KbRef): Promise<Record<string, never>> {
    const kb = await this.kbs.requireInAccount(req);
    const keyIds = await this.serviceAccounts.keyIdsOfKb(kb.id);
    const saIds = (await this.serviceAccounts.listByKb(kb.id)).map((s) => s.id);
    // Keys stop working everywhere at once; content removes the KB's resources and blobs. The events
    // commit with the deletion (outbox): a crash before they are published only delays them.
    await this.outbox.commit(this.ds, async (m) => {
      await this.kbs.deleteWithCredentials(kb.id, saIds, m);
      return {
        result: undefined,
        events: [
          ...(keyIds.length > 0 ? [outboxEvent(AccountsSubjects.credentialRevoked, { credential_ids: keyIds })] : []),
          outboxEvent(AccountsSubjects.accessChanged, { kb_ids: [kb.id] }),
          outboxEvent(AccountsSubjects.kbDeleted, { account_id: kb.accountId, kb_id: kb.id }),
        ],
      };
    });
    return {};
  }
}

/** The KB record (spec 2.6); `admin` and `contrib` say what the caller's role allows. */
export function knowledgeBoxDto(kb: KnowledgeBoxEntity, callerRole: KbRole | undefined): KnowledgeBoxDto {
  return {
    id: kb.id,
    slug: kb.slug,
    account_id: kb.accountId,
    zone: kb.zone,
    title: kb.title,
    description: kb.description,
    state: kb.state,
    created: kb.createdAt.toISOString(),
    admin: kbRoleSatisfies(callerRole, 'MANAGER'),
    contrib: kbRoleSatisfies(callerRole, 'WRITER'),
    allowed_origins: kb.allowedOrigins,
    search_configs: kb.searchConfigs,
    external_index_provider: kb.externalIndexProvider,
  };
}

/** An item of a KB list (spec 2.6), `role_on_kb` being the caller's. */
export function knowledgeBoxSummary(kb: KnowledgeBoxEntity, role: KbRole): KnowledgeBoxSummaryDto {
  return {
    id: kb.id,
    slug: kb.slug,
    zone: kb.zone,
    title: kb.title,
    state: kb.state,
    description: kb.description,
    role_on_kb: role,
    allowed_origins: kb.allowedOrigins,
    search_configs: kb.searchConfigs,
    external_index_provider: kb.externalIndexProvider,
  };
}
