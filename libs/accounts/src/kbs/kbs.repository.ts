import { asRow } from '@kb/platform/database';
import { Inject, Injectable } from '@nestjs/common';
import { In, type DataSource, type EntityManager, type Repository } from 'typeorm';
import { DomainError, ErrorCodes, type KbRole } from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { KbUserEntity } from '../entities/kb-user.entity';
import { SecretCredentialEntity } from '../entities/secret-credential.entity';
import { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';

@Injectable()
export class KbsRepository {
  private readonly kbs: Repository<KnowledgeBoxEntity>;
  private readonly kbUsers: Repository<KbUserEntity>;

  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {
    this.kbs = ds.getRepository(KnowledgeBoxEntity);
    this.kbUsers = ds.getRepository(KbUserEntity);
  }

  findById(kbId: string): Promise<KnowledgeBoxEntity | null> {
    return this.kbs.findOneBy({ id: kbId });
  }

  findInAccount(accountId: string, kbId: string): Promise<KnowledgeBoxEntity | null> {
    return this.kbs.findOneBy({ id: kbId, accountId });
  }

  /** The KB of `ref` in its account, or KB_NOT_FOUND. */
  async requireInAccount(ref: { account_id: string; kb_id: string }): Promise<KnowledgeBoxEntity> {
    const kb = await this.findInAccount(ref.account_id, ref.kb_id);
    if (!kb) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
    return kb;
  }

  /** The distinct zones KBs live in (of one account, or of all), at most `limit`. */
  async zones(accountId: string | undefined, limit: number): Promise<string[]> {
    const rows = (await this.ds.query(
      `SELECT DISTINCT zone FROM accounts.knowledge_boxes ${accountId ? 'WHERE account_id = $1' : ''} ORDER BY zone LIMIT ${limit}`,
      accountId ? [accountId] : [],
    )) as { zone: string }[];
    return rows.map((r) => r.zone);
  }

  listByAccount(accountId: string): Promise<KnowledgeBoxEntity[]> {
    return this.kbs.find({ where: { accountId }, order: { createdAt: 'ASC' } });
  }

  /**
   * The KBs of the named accounts and the named KBs (a user's owned accounts and the KBs they hold a
   * role on), optionally only those with `slug`; oldest first.
   */
  listOfAccountsOrIds(accountIds: string[], kbIds: string[], slug?: string): Promise<KnowledgeBoxEntity[]> {
    if (accountIds.length === 0 && kbIds.length === 0) return Promise.resolve([]);
    const where = [
      ...(accountIds.length > 0 ? [{ accountId: In(accountIds), ...(slug !== undefined ? { slug } : {}) }] : []),
      ...(kbIds.length > 0 ? [{ id: In(kbIds), ...(slug !== undefined ? { slug } : {}) }] : []),
    ];
    return this.kbs.find({ where, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  countByAccount(accountId: string): Promise<number> {
    return this.kbs.countBy({ accountId });
  }

  async insert(kb: KnowledgeBoxEntity, owner?: { userId: string; role: KbRole }, manager?: EntityManager): Promise<void> {
    const m = manager ?? this.ds.manager;
    await m.insert(KnowledgeBoxEntity, asRow(kb));
    if (owner) await m.insert(KbUserEntity, { kbId: kb.id, userId: owner.userId, role: owner.role });
  }

  async update(kbId: string, patch: Partial<KnowledgeBoxEntity>, manager?: EntityManager): Promise<void> {
    await (manager ?? this.ds.manager).update(KnowledgeBoxEntity, { id: kbId }, asRow(patch));
  }

  /** Deletes the KB (its service accounts and memberships cascade) and the keys of those accounts, in the caller's transaction. */
  async deleteWithCredentials(kbId: string, credentialOwnerIds: string[], m: EntityManager): Promise<void> {
    if (credentialOwnerIds.length > 0) await m.delete(SecretCredentialEntity, { ownerId: In(credentialOwnerIds) });
    await m.delete(KnowledgeBoxEntity, { id: kbId });
  }

  async roleOf(kbId: string, userId: string): Promise<KbRole | undefined> {
    return (await this.kbUsers.findOneBy({ kbId, userId }))?.role;
  }

  async rolesOfUser(userId: string): Promise<Map<string, KbRole>> {
    const rows = await this.kbUsers.findBy({ userId });
    return new Map(rows.map((r) => [r.kbId, r.role]));
  }
}
