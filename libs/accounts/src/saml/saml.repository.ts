import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';

/** The SAML replay stores (issued request ids, seen assertion ids) and the IdP identities of users. */
@Injectable()
export class SamlRepository {
  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {}

  /**
   * The account whose identity provider owns this e-mail domain: its saml_config lists the domain
   * (or, older single-provider form without saml_config, its `domain` column is it) AND it verified
   * its claim on the domain. A verified claim is unique per domain, so at most one account answers.
   */
  async findAccountIdByDomain(domain: string): Promise<string | null> {
    const rows: { id: string }[] = await this.ds.query(
      `SELECT a.id FROM accounts.accounts a
       JOIN accounts.saml_domains c ON c.account_id = a.id AND c.domain = $1 AND c.verified_at IS NOT NULL
       WHERE (a.saml_config IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(a.saml_config -> 'domains') d WHERE lower(d) = $1))
          OR (a.saml_config IS NULL AND a.saml_entity_id IS NOT NULL AND a.saml_sso_url IS NOT NULL AND a.saml_x509_cert IS NOT NULL AND lower(a.domain) = $1)
       LIMIT 1`,
      [domain.toLowerCase()],
    );
    return rows[0]?.id ?? null;
  }

  /** `linkUserId`: the signed-in user who started this request to link the IdP identity to themselves. */
  async saveRequest(accountId: string, requestId: string, expiresAt: Date, linkUserId: string | null): Promise<void> {
    await this.ds.query(`INSERT INTO accounts.saml_requests (id, account_id, expires_at, link_user_id) VALUES ($1, $2, $3, $4)`, [
      requestId,
      accountId,
      expiresAt,
      linkUserId,
    ]);
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

  /** Marks the request used and says whether it was a link request; null when it was unknown, expired or already used (one atomic statement, so two racing posts cannot both win). */
  async consumeRequest(accountId: string, requestId: string): Promise<{ linkUserId: string | null } | null> {
    const rows = firstResult(
      await this.ds.query(
        `UPDATE accounts.saml_requests SET used_at = now() WHERE id = $1 AND account_id = $2 AND used_at IS NULL AND expires_at > now() RETURNING link_user_id`,
        [requestId, accountId],
      ),
    ) as { link_user_id: string | null }[];
    return rows[0] ? { linkUserId: rows[0].link_user_id } : null;
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
   * The user this IdP identity signs in: the one the IdP provisioned or that linked it, else a new
   * user created for it (no password; the address is vouched for by the account's verified domain).
   * An existing user the identity does not belong to is refused, whatever the e-mail address says:
   * any account can configure an IdP that asserts any address.
   */
  async signInIdentity(identity: IdentityKey, email: string, name: string, m: EntityManager): Promise<{ userId: string; joined: boolean }> {
    const known: { user_id: string }[] = await m.query(
      `SELECT user_id FROM accounts.user_identities WHERE account_id = $1 AND idp_entity_id = $2 AND subject = $3`,
      [identity.accountId, identity.entityId, identity.subject],
    );
    let userId = known[0]?.user_id;
    if (!userId) {
      // ON CONFLICT DO NOTHING: an address someone already holds (a password user, another account's member) is never taken over.
      const created: { id: string }[] = await m.query(
        `INSERT INTO accounts.users (id, email, name, password_hash, type, created_at, last_login, email_verified_at) VALUES ($1, $2, $3, NULL, 'USER', now(), now(), now())
         ON CONFLICT (email) DO NOTHING RETURNING id`,
        [randomUUID(), email, name],
      );
      userId = created[0]?.id;
      if (!userId) {
        throw new DomainError(
          ErrorCodes.UNAUTHENTICATED,
          `Single sign-on refused: ${email} already has a user that this identity provider did not create; that user can sign in and link single sign-on from their profile`,
        );
      }
      await m.query(`INSERT INTO accounts.user_identities (account_id, idp_entity_id, subject, user_id) VALUES ($1, $2, $3, $4)`, [
        identity.accountId,
        identity.entityId,
        identity.subject,
        userId,
      ]);
    } else {
      await m.query(`UPDATE accounts.users SET last_login = now() WHERE id = $1`, [userId]);
    }
    return { userId, joined: await joinAccount(m, identity.accountId, userId) };
  }

  /** Attaches the IdP identity to the signed-in user who started the link request; an identity already attached to someone else is a 409. */
  async linkIdentity(identity: IdentityKey, userId: string, m: EntityManager): Promise<{ userId: string; joined: boolean }> {
    await m.query(
      `INSERT INTO accounts.user_identities (account_id, idp_entity_id, subject, user_id, linked) VALUES ($1, $2, $3, $4, true) ON CONFLICT DO NOTHING`,
      [identity.accountId, identity.entityId, identity.subject, userId],
    );
    const owner: { user_id: string }[] = await m.query(
      `SELECT user_id FROM accounts.user_identities WHERE account_id = $1 AND idp_entity_id = $2 AND subject = $3`,
      [identity.accountId, identity.entityId, identity.subject],
    );
    if (owner[0]?.user_id !== userId)
      throw new DomainError(ErrorCodes.CONFLICT, 'This identity of the identity provider already belongs to another user');
    await m.query(`UPDATE accounts.users SET last_login = now() WHERE id = $1`, [userId]);
    return { userId, joined: await joinAccount(m, identity.accountId, userId) };
  }
}

/** Which IdP identity: the account, its IdP's entity id, and the subject (NameID) the IdP asserted. */
export interface IdentityKey {
  accountId: string;
  entityId: string;
  subject: string;
}

/** Makes the user an AMEMBER unless already a member, within the account's user limit; true when added. */
async function joinAccount(m: EntityManager, accountId: string, userId: string): Promise<boolean> {
  const inserted: unknown[] = await m.query(
    `INSERT INTO accounts.account_users (account_id, user_id, role) VALUES ($1, $2, 'AMEMBER') ON CONFLICT (account_id, user_id) DO NOTHING RETURNING user_id`,
    [accountId, userId],
  );
  if (inserted.length === 0) return false;
  const counts: { users: string; max_users: number }[] = await m.query(
    `SELECT (SELECT count(*) FROM accounts.account_users WHERE account_id = $1) AS users, max_users FROM accounts.accounts WHERE id = $1`,
    [accountId],
  );
  const limit = counts[0];
  if (limit && Number(limit.users) > limit.max_users) {
    throw new DomainError(
      ErrorCodes.QUOTA_EXCEEDED,
      `The account has reached its limit of ${limit.max_users} users; ask an owner to make room`,
    );
  }
  return true;
}

/** TypeORM's postgres driver returns `[rows, count]` for UPDATE … RETURNING. */
function firstResult(result: unknown[]): unknown[] {
  return Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
}
