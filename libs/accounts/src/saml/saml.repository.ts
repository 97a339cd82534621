import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';

/** The SAML replay stores (issued request ids, seen assertion ids) and SSO user provisioning. */
@Injectable()
export class SamlRepository {
  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {}

  /**
   * The account whose identity provider owns this e-mail domain: its saml_config lists the domain,
   * or (older single-provider form, only when there is no saml_config) its `domain` column is it.
   * Domains are compared lower-cased so rows written before normalisation still match.
   */
  async findAccountIdByDomain(domain: string): Promise<string | null> {
    const rows: { id: string }[] = await this.ds.query(
      `SELECT id FROM accounts.accounts
       WHERE (saml_config IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(saml_config -> 'domains') d WHERE lower(d) = $1))
          OR (saml_config IS NULL AND saml_entity_id IS NOT NULL AND saml_sso_url IS NOT NULL AND saml_x509_cert IS NOT NULL AND lower(domain) = $1)
       ORDER BY created_at LIMIT 1`,
      [domain.toLowerCase()],
    );
    return rows[0]?.id ?? null;
  }

  async saveRequest(accountId: string, requestId: string, expiresAt: Date): Promise<void> {
    await this.ds.query(`INSERT INTO accounts.saml_requests (id, account_id, expires_at) VALUES ($1, $2, $3)`, [requestId, accountId, expiresAt]);
  }

  /**
   * Issue time of an unexpired request of this account, or null. Used ones count too: whether it is
   * still unused is decided by consumeRequest, after the replay check has had its say.
   */
  async requestIssuedAt(accountId: string, requestId: string): Promise<Date | null> {
    const rows: { created_at: Date }[] = await this.ds.query(
      `SELECT created_at FROM accounts.saml_requests WHERE id = $1 AND account_id = $2 AND expires_at > now()`,
      [requestId, accountId],
    );
    return rows[0]?.created_at ?? null;
  }

  /** Marks the request used; false when it was unknown, expired or already used (one atomic statement, so two racing posts cannot both win). */
  async consumeRequest(accountId: string, requestId: string): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(
      `UPDATE accounts.saml_requests SET used_at = now() WHERE id = $1 AND account_id = $2 AND used_at IS NULL AND expires_at > now() RETURNING id`,
      [requestId, accountId],
    );
    return firstResult(rows).length === 1;
  }

  /** Records an accepted assertion id until it expires; false when it was seen before (a replay). */
  async recordAssertion(accountId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(
      `INSERT INTO accounts.saml_assertions (account_id, assertion_id, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING assertion_id`,
      [accountId, assertionId, expiresAt],
    );
    return rows.length === 1;
  }

  /** Opportunistic clean-up: both stores only need rows that have not expired yet. */
  async purgeExpired(): Promise<void> {
    await this.ds.query(`DELETE FROM accounts.saml_requests WHERE expires_at < now() - interval '1 hour'`);
    await this.ds.query(`DELETE FROM accounts.saml_assertions WHERE expires_at < now()`);
  }

  /**
   * The user with this e-mail (created without a password when new), made an AMEMBER of the account
   * unless already a member. Returns whether the membership was added (the access cache must hear of it).
   */
  async provisionMember(accountId: string, email: string, name: string): Promise<{ userId: string; joined: boolean }> {
    return this.ds.transaction(async (m) => {
      // ON CONFLICT: a first login racing with a sign-up or a second tab must not fail.
      await m.query(
        `INSERT INTO accounts.users (id, email, name, password_hash, type, created_at, last_login) VALUES ($1, $2, $3, NULL, 'USER', now(), now())
         ON CONFLICT (email) DO UPDATE SET last_login = now()`,
        [randomUUID(), email, name],
      );
      const users: { id: string }[] = await m.query(`SELECT id FROM accounts.users WHERE email = $1`, [email]);
      const userId = users[0]?.id;
      if (!userId) throw new DomainError(ErrorCodes.INTERNAL, 'The signed-in user could not be stored');
      const inserted: unknown[] = await m.query(
        `INSERT INTO accounts.account_users (account_id, user_id, role) VALUES ($1, $2, 'AMEMBER') ON CONFLICT (account_id, user_id) DO NOTHING RETURNING user_id`,
        [accountId, userId],
      );
      if (inserted.length === 0) return { userId, joined: false };
      const counts: { users: string; max_users: number }[] = await m.query(
        `SELECT (SELECT count(*) FROM accounts.account_users WHERE account_id = $1) AS users, max_users FROM accounts.accounts WHERE id = $1`,
        [accountId],
      );
      const limit = counts[0];
      if (limit && Number(limit.users) > limit.max_users) {
        throw new DomainError(ErrorCodes.QUOTA_EXCEEDED, `The account has reached its limit of ${limit.max_users} users; ask an owner to make room`);
      }
      return { userId, joined: true };
    });
  }
}

/** TypeORM's postgres driver returns `[rows, count]` for UPDATE … RETURNING. */
function firstResult(result: unknown[]): unknown[] {
  return Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
}
