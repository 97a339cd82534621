import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@kb/contracts';

/** How many failures a key may have before each further attempt waits, and how the wait grows. */
export interface BackoffPolicy {
  /** Failures allowed with no wait (typos). */
  free: number;
  /** Wait after the first failure past `free`; doubles with each further failure. */
  baseMs: number;
  /** The wait never grows beyond this. */
  maxMs: number;
}

/** Per (e-mail, client address): a person mistyping gets a few tries, a guesser waits ever longer. */
export const PER_EMAIL_AND_CLIENT: BackoffPolicy = { free: 3, baseMs: 1_000, maxMs: 15 * 60_000 };
/** Per client address, whatever the e-mail: an office behind one NAT has room; credential stuffing does not. */
export const PER_CLIENT: BackoffPolicy = { free: 20, baseMs: 1_000, maxMs: 15 * 60_000 };
/** A key whose last failure is older than this starts afresh (and its row is pruned). */
export const FORGET_AFTER_MS = 24 * 60 * 60_000;

/** The epoch ms before which the next attempt is refused, or 0 when it may go ahead. */
export function blockedUntil(policy: BackoffPolicy, failures: number, lastFailure: number, now: number): number {
  if (failures <= policy.free || now - lastFailure > FORGET_AFTER_MS) return 0;
  const wait = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures - policy.free - 1, 40));
  const until = lastFailure + wait;
  return until > now ? until : 0;
}

interface Row {
  key: string;
  failures: number;
  last_failure: Date | string;
}

/**
 * Throttles password sign-in without letting a third party lock anyone out: failures are counted
 * per client address and per (e-mail, client address), never per e-mail alone, so a guesser slows
 * down only their own address. The counts live in the accounts database: every replica of every
 * app sees the same numbers (an in-memory count would give an attacker one budget per replica).
 * Only failures write; a refused attempt costs one indexed read and no password hash.
 */
export class SignInThrottle {
  constructor(
    private readonly ds: DataSource,
    private readonly now: () => number = Date.now,
  ) {}

  async assertAllowed(email: string, client: string): Promise<void> {
    const keys = this.keys(email, client);
    const rows: Row[] = await this.ds.query(`SELECT key, failures, last_failure FROM accounts.sign_in_throttle WHERE key = ANY($1)`, [
      [keys.pair, keys.client],
    ]);
    const now = this.now();
    let until = 0;
    for (const row of rows) {
      const policy = row.key === keys.pair ? PER_EMAIL_AND_CLIENT : PER_CLIENT;
      until = Math.max(until, blockedUntil(policy, row.failures, new Date(row.last_failure).getTime(), now));
    }
    if (until > 0) {
      throw new DomainError(ErrorCodes.RATE_LIMITED, 'Too many failed sign-in attempts from this address; try again later', {
        try_after: Math.ceil(until / 1000),
      });
    }
  }

  /** Counts a failure under both keys in one statement (safe under concurrent attempts); prunes forgotten keys. */
  async recordFailure(email: string, client: string): Promise<void> {
    const keys = this.keys(email, client);
    const now = new Date(this.now());
    await this.ds.query(
      `INSERT INTO accounts.sign_in_throttle AS t (key, failures, last_failure) SELECT k, 1, $2 FROM unnest($1::text[]) AS k
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN t.last_failure < $2::timestamptz - ($3 * interval '1 millisecond') THEN 1 ELSE t.failures + 1 END,
         last_failure = $2`,
      [[keys.pair, keys.client], now, FORGET_AFTER_MS],
    );
    await this.ds.query(`DELETE FROM accounts.sign_in_throttle WHERE last_failure < $1::timestamptz - ($2 * interval '1 millisecond')`, [
      now,
      FORGET_AFTER_MS,
    ]);
  }

  /**
   * A success clears the (e-mail, address) count only: the address's own count decays with time,
   * or a stuffer holding one valid account could reset it at will.
   */
  async recordSuccess(email: string, client: string): Promise<void> {
    await this.ds.query(`DELETE FROM accounts.sign_in_throttle WHERE key = $1`, [this.keys(email, client).pair]);
  }

  private keys(email: string, client: string): { pair: string; client: string } {
    return { pair: `pair:${client}|${email}`, client: `client:${client}` };
  }
}
