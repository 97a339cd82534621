import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type AccountCallerRef,
  type AccountUserDto,
  type SearchAccountUsersRequest,
  type UpdateAccountUsersRequest,
} from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { AccountsService } from './accounts.service';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

/** Members of an account. An account always keeps at least one owner. */
@Injectable()
export class AccountUsersService {
  constructor(
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly accounts: AccountsService,
    private readonly outbox: AccountsOutbox,
  ) {}

  async list(ref: AccountCallerRef): Promise<AccountUserDto[]> {
    const account = await this.accounts.require(ref.account);
    return this.ds.query(
      `SELECT u.id, u.name, u.email, au.role FROM accounts.account_users au JOIN accounts.users u ON u.id = au.user_id WHERE au.account_id = $1 ORDER BY u.email`,
      [account.id],
    );
  }

  async search(req: SearchAccountUsersRequest): Promise<AccountUserDto[]> {
    const account = await this.accounts.require(req.account);
    const pattern = `%${req.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.ds.query(
      `SELECT u.id, u.name, u.email, au.role FROM accounts.account_users au JOIN accounts.users u ON u.id = au.user_id
       WHERE au.account_id = $1 AND (lower(u.email) LIKE $2 OR lower(u.name) LIKE $2) ORDER BY u.email LIMIT 100`,
      [account.id, pattern],
    );
  }

  async update(req: UpdateAccountUsersRequest): Promise<null> {
    const account = await this.accounts.require(req.account);
    const add = req.body.add ?? [];
    const remove = req.body.delete ?? [];
    const changed = [...add.map((a) => a.id), ...remove];
    await this.outbox.commit(this.ds, async (m) => {
      if (add.length > 0) {
        const known: { id: string }[] = await m.query(`SELECT id FROM accounts.users WHERE id = ANY($1::uuid[])`, [add.map((a) => a.id)]);
        const missing = add.filter((a) => !known.some((k) => k.id === a.id));
        if (missing.length > 0) {
          throw DomainError.validation(
            missing.map((a) => ({ loc: ['body', 'add', add.indexOf(a), 'id'], msg: `Unknown user ${a.id}`, type: 'value_error' })),
          );
        }
        for (const a of add) {
          await m.query(
            `INSERT INTO accounts.account_users (account_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (account_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
            [account.id, a.id, a.role],
          );
        }
      }
      if (remove.length > 0)
        await m.query(`DELETE FROM accounts.account_users WHERE account_id = $1 AND user_id = ANY($2::uuid[])`, [account.id, remove]);
      const counts: { users: string; owners: string }[] = await m.query(
        `SELECT count(*) AS users, count(*) FILTER (WHERE role = 'AOWNER') AS owners FROM accounts.account_users WHERE account_id = $1`,
        [account.id],
      );
      if (Number(counts[0]?.owners ?? 0) === 0) throw new DomainError(ErrorCodes.CONFLICT, 'An account needs at least one owner (AOWNER)');
      if (Number(counts[0]?.users ?? 0) > account.maxUsers) {
        throw new DomainError(ErrorCodes.QUOTA_EXCEEDED, `The account has reached its limit of ${account.maxUsers} users`);
      }
      return { result: undefined, events: changed.length > 0 ? [outboxEvent(AccountsSubjects.accessChanged, { user_ids: changed })] : [] };
    });
    return null;
  }
}
