import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';

export interface DomainClaim {
  accountId: string;
  domain: string;
  token: string;
  checkedAt: Date | null;
  verifiedAt: Date | null;
}

interface ClaimRow {
  account_id: string;
  domain: string;
  token: string;
  checked_at: Date | null;
  verified_at: Date | null;
}

const toClaim = (r: ClaimRow): DomainClaim => ({
  accountId: r.account_id,
  domain: r.domain,
  token: r.token,
  checkedAt: r.checked_at,
  verifiedAt: r.verified_at,
});

/** Claims of e-mail domains by accounts for single sign-on; a claim counts once it is verified. */
@Injectable()
export class SamlDomainsRepository {
  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {}

  async list(accountId: string): Promise<DomainClaim[]> {
    const rows: ClaimRow[] = await this.ds.query(`SELECT * FROM accounts.saml_domains WHERE account_id = $1 ORDER BY domain`, [accountId]);
    return rows.map(toClaim);
  }

  async find(accountId: string, domain: string): Promise<DomainClaim | null> {
    const rows: ClaimRow[] = await this.ds.query(`SELECT * FROM accounts.saml_domains WHERE account_id = $1 AND domain = $2`, [
      accountId,
      domain,
    ]);
    return rows[0] ? toClaim(rows[0]) : null;
  }

  /** The account holding a verified claim on any of `domains`, other than `exceptAccountId`. */
  async verifiedElsewhere(domains: readonly string[], exceptAccountId: string): Promise<{ domain: string } | null> {
    const rows: { domain: string }[] = await this.ds.query(
      `SELECT domain FROM accounts.saml_domains WHERE domain = ANY($1::text[]) AND account_id <> $2 AND verified_at IS NOT NULL LIMIT 1`,
      [domains, exceptAccountId],
    );
    return rows[0] ?? null;
  }

  /** Pending claims for the listed domains the account has no claim on yet; claims of unlisted domains go. */
  async sync(accountId: string, domains: readonly string[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`DELETE FROM accounts.saml_domains WHERE account_id = $1 AND NOT (domain = ANY($2::text[]))`, [accountId, domains]);
      for (const domain of domains) {
        await m.query(`INSERT INTO accounts.saml_domains (account_id, domain, token) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
          accountId,
          domain,
          newToken(),
        ]);
      }
    });
  }

  async claim(accountId: string, domain: string): Promise<void> {
    await this.ds.query(`INSERT INTO accounts.saml_domains (account_id, domain, token) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      accountId,
      domain,
      newToken(),
    ]);
  }

  async markChecked(accountId: string, domain: string): Promise<void> {
    await this.ds.query(`UPDATE accounts.saml_domains SET checked_at = now() WHERE account_id = $1 AND domain = $2`, [accountId, domain]);
  }

  /** Marks the claim verified; the partial unique index makes a second account's attempt fail (23505). */
  async markVerified(accountId: string, domain: string): Promise<void> {
    await this.ds.query(`UPDATE accounts.saml_domains SET checked_at = now(), verified_at = now() WHERE account_id = $1 AND domain = $2`, [
      accountId,
      domain,
    ]);
  }

  async isVerified(accountId: string, domain: string): Promise<boolean> {
    const rows: unknown[] = await this.ds.query(
      `SELECT 1 FROM accounts.saml_domains WHERE account_id = $1 AND domain = $2 AND verified_at IS NOT NULL`,
      [accountId, domain.toLowerCase()],
    );
    return rows.length === 1;
  }
}

function newToken(): string {
  return randomBytes(18).toString('base64url');
}
