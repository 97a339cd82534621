import { asRow } from '@kb/platform/database';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { AccountRole } from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { AccountUserEntity } from '../entities/account-user.entity';
import { AccountEntity } from '../entities/account.entity';
import { UserEntity } from '../entities/user.entity';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Users, accounts and account membership. */
@Injectable()
export class UsersRepository {
  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {}

  findUser(userId: string): Promise<UserEntity | null> {
    return this.ds.getRepository(UserEntity).findOneBy({ id: userId });
  }

  findUserByEmail(email: string): Promise<UserEntity | null> {
    return this.ds.getRepository(UserEntity).findOneBy({ email: email.toLowerCase() });
  }

  /** An account path segment may be its id or its slug. */
  findAccount(idOrSlug: string): Promise<AccountEntity | null> {
    const repo = this.ds.getRepository(AccountEntity);
    return UUID.test(idOrSlug) ? repo.findOneBy({ id: idOrSlug }) : repo.findOneBy({ slug: idOrSlug });
  }

  async accountRole(accountId: string, userId: string): Promise<AccountRole | undefined> {
    return (await this.ds.getRepository(AccountUserEntity).findOneBy({ accountId, userId }))?.role;
  }

  /** Every account the user is a member of, with their role there. */
  async membershipsOf(userId: string): Promise<{ accountId: string; role: AccountRole }[]> {
    const rows = await this.ds.getRepository(AccountUserEntity).findBy({ userId });
    return rows.map((r) => ({ accountId: r.accountId, role: r.role }));
  }

  async countUsers(): Promise<number> {
    return this.ds.getRepository(UserEntity).count();
  }

  async insertUser(user: UserEntity, manager?: EntityManager): Promise<void> {
    await (manager ?? this.ds.manager).insert(UserEntity, user);
  }

  async insertAccount(account: AccountEntity, owner: { userId: string; role: AccountRole }, manager?: EntityManager): Promise<void> {
    const m = manager ?? this.ds.manager;
    await m.insert(AccountEntity, asRow(account));
    await m.insert(AccountUserEntity, { accountId: account.id, userId: owner.userId, role: owner.role });
  }
}
