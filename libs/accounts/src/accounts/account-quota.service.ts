import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type AccountBlockingDto,
  type AccountQuotaDto,
  type EffectiveLimits,
  type SetAccountLimitsRequest,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { AccountEntity } from '../entities/account.entity';
import { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';
import { UserEntity } from '../entities/user.entity';
import { UsersRepository } from '../kbs/users.repository';
import { effectiveLimits } from './account-limits';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The account side of usage limits (issue 19): the limits reporting decides blocks with, operators
 * setting them, and the blocks reporting decided shown on the account record
 * (`blocking_state`, `blocked_features`).
 */
@Injectable()
export class AccountQuotaService {
  constructor(
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly users: UsersRepository,
  ) {}

  async kbAccount(kbId: string): Promise<{ account_id: string | null }> {
    if (!UUID.test(kbId)) return { account_id: null };
    const kb = await this.ds.getRepository(KnowledgeBoxEntity).findOne({ where: { id: kbId }, select: { id: true, accountId: true } });
    return { account_id: kb?.accountId ?? null };
  }

  async quota(accountId: string): Promise<AccountQuotaDto> {
    if (!UUID.test(accountId)) return { found: false, limits: effectiveLimits({}) };
    const account = await this.ds.getRepository(AccountEntity).findOne({ where: { id: accountId }, select: { id: true, limits: true } });
    return { found: account !== null, limits: effectiveLimits(account?.limits) };
  }

  /** Operators only (users of type ROOT): the members given replace the account's own, the others stay. */
  async setLimits(req: SetAccountLimitsRequest): Promise<EffectiveLimits> {
    const user = await this.ds.getRepository(UserEntity).findOne({ where: { id: req.user_id }, select: { id: true, type: true } });
    if (user?.type !== 'ROOT') throw new DomainError(ErrorCodes.FORBIDDEN, 'Only operators (ROOT users) set account limits');
    const account = await this.users.findAccount(req.account);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    const own = (account.limits ?? {}) as Record<string, Record<string, number> | undefined>;
    const next: Record<string, Record<string, number>> = {};
    for (const group of ['upload', 'usage', 'processing'] as const) {
      const merged = { ...(own[group] ?? {}), ...((req.body[group] ?? {}) as Record<string, number>) };
      if (Object.keys(merged).length > 0) next[group] = merged;
    }
    await this.ds.getRepository(AccountEntity).update({ id: account.id }, { limits: next });
    await this.bus.publish(AccountsSubjects.accountLimitsChanged, { account_id: account.id });
    return effectiveLimits(next);
  }

  /** Reporting decided the account's blocks: the record shows them. */
  async applyBlocking(e: AccountBlockingDto): Promise<void> {
    const features = [...new Set([...e.features, ...Object.values(e.kbs ?? {}).flat()])].sort();
    await this.ds.getRepository(AccountEntity).update({ id: e.account_id }, { blockingState: e.blocking_state, blockedFeatures: features });
  }
}
