import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type DeleteKbInviteRequest,
  type InviteCreatedDto,
  type InviteToKbRequest,
  type InvitedUserDto,
  type KbRef,
  type KbUserDto,
  type ListKbUsersRequest,
  type UpdateKbUsersRequest,
} from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { InvitesService } from '../invites/invites.service';
import { KbsRepository } from './kbs.repository';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';

/** Users of one Knowledge Box and invitations to it. */
@Injectable()
export class KbUsersService {
  constructor(
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly kbs: KbsRepository,
    private readonly invites: InvitesService,
    private readonly outbox: AccountsOutbox,
  ) {}

  async list(req: ListKbUsersRequest): Promise<KbUserDto[]> {
    await this.kbs.requireInAccount(req);
    const rows: { id: string; role: KbUserDto['role']; email: string; name: string }[] = await this.ds.query(
      `SELECT u.id, ku.role, u.email, u.name FROM accounts.kb_users ku JOIN accounts.users u ON u.id = ku.user_id WHERE ku.kb_id = $1 ORDER BY u.email`,
      [req.kb_id],
    );
    return rows.map((r) => (req.include_user_detail ? r : { id: r.id, role: r.role }));
  }

  /** KB users must be members of the KB's account; the KB keeps at least one SOWNER. */
  async update(req: UpdateKbUsersRequest): Promise<null> {
    const kb = await this.kbs.requireInAccount(req);
    const upserts = [...(req.body.add ?? []), ...(req.body.update ?? [])];
    const removals = req.body.delete ?? [];
    const changed = [...upserts.map((u) => u.id), ...removals];
    await this.outbox.commit(this.ds, async (m) => {
      if (upserts.length > 0) {
        const members: { user_id: string }[] = await m.query(
          `SELECT user_id FROM accounts.account_users WHERE account_id = $1 AND user_id = ANY($2::uuid[])`,
          [kb.accountId, upserts.map((u) => u.id)],
        );
        const outsiders = upserts.filter((u) => !members.some((x) => x.user_id === u.id));
        if (outsiders.length > 0) {
          throw DomainError.validation(
            outsiders.map((u) => ({
              loc: ['body', 'add', u.id],
              msg: `User ${u.id} is not a member of the account: invite them`,
              type: 'value_error',
            })),
          );
        }
        for (const u of upserts) {
          await m.query(
            `INSERT INTO accounts.kb_users (kb_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (kb_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
            [kb.id, u.id, u.role],
          );
        }
      }
      if (removals.length > 0)
        await m.query(`DELETE FROM accounts.kb_users WHERE kb_id = $1 AND user_id = ANY($2::uuid[])`, [kb.id, removals]);
      const owners: { n: string }[] = await m.query(`SELECT count(*) AS n FROM accounts.kb_users WHERE kb_id = $1 AND role = 'SOWNER'`, [
        kb.id,
      ]);
      const hadOwners = upserts.length + removals.length > 0;
      if (hadOwners && Number(owners[0]?.n ?? 0) === 0) {
        // Account owners manage every KB anyway, but an explicit KB owner must not vanish by accident.
        const accountOwners: { n: string }[] = await m.query(
          `SELECT count(*) AS n FROM accounts.account_users WHERE account_id = $1 AND role = 'AOWNER'`,
          [kb.accountId],
        );
        if (Number(accountOwners[0]?.n ?? 0) === 0)
          throw new DomainError(ErrorCodes.CONFLICT, 'A Knowledge Box needs at least one manager (SOWNER)');
      }
      return { result: undefined, events: changed.length > 0 ? [outboxEvent(AccountsSubjects.accessChanged, { user_ids: changed })] : [] };
    });
    return null;
  }

  async invite(req: InviteToKbRequest): Promise<InviteCreatedDto> {
    const kb = await this.kbs.requireInAccount(req);
    return this.invites.invite(
      { accountId: kb.accountId, kbId: kb.id, label: `the Knowledge Box "${kb.title || kb.slug}"` },
      req.body.email,
      req.body.role,
      req.invited_by,
    );
  }

  async listInvites(ref: KbRef): Promise<InvitedUserDto[]> {
    const kb = await this.kbs.requireInAccount(ref);
    return this.invites.pending(kb.accountId, kb.id);
  }

  async deleteInvite(req: DeleteKbInviteRequest): Promise<null> {
    const kb = await this.kbs.requireInAccount(req);
    await this.invites.revoke(kb.accountId, req.email, kb.id);
    return null;
  }
}
