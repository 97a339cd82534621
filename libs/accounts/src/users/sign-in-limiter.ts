import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes } from '@kb/contracts';

/** Failures allowed per address within the window before it is locked for LOCK_MS. */
export const MAX_FAILURES = 5;
const WINDOW_MS = 15 * 60 * 1000;
const LOCK_MS = 15 * 60 * 1000;

/**
 * Limits password guessing per e-mail address, in the database so every replica sees the same
 * count. A locked address gets 429 with `try_after` even for the right password.
 */
export class SignInLimiter {
  constructor(private readonly ds: DataSource) {}

  async assertNotLocked(email: string): Promise<void> {
    const rows: { locked_until: Date | null }[] = await this.ds.query(`SELECT locked_until FROM accounts.sign_in_failures WHERE email = $1`, [email]);
    const until = rows[0]?.locked_until ? new Date(rows[0].locked_until).getTime() : 0;
    if (until > Date.now()) {
      throw new DomainError(ErrorCodes.RATE_LIMITED, 'Too many failed sign-in attempts for this address; try again later', { try_after: Math.ceil(until / 1000) });
    }
  }

  /** Counts a failure in a single statement (safe under concurrent attempts). */
  async recordFailure(email: string): Promise<void> {
    await this.ds.query(
      `INSERT INTO accounts.sign_in_failures AS f (email, failures, window_start, locked_until) VALUES ($1, 1, now(), NULL)
       ON CONFLICT (email) DO UPDATE SET
         failures = CASE WHEN f.window_start < now() - ($2 * interval '1 millisecond') THEN 1 ELSE f.failures + 1 END,
         window_start = CASE WHEN f.window_start < now() - ($2 * interval '1 millisecond') THEN now() ELSE f.window_start END,
         locked_until = CASE WHEN f.window_start >= now() - ($2 * interval '1 millisecond') AND f.failures + 1 >= $3
                             THEN now() + ($4 * interval '1 millisecond') ELSE f.locked_until END`,
      [email, WINDOW_MS, MAX_FAILURES, LOCK_MS],
    );
  }

  async reset(email: string): Promise<void> {
    await this.ds.query(`DELETE FROM accounts.sign_in_failures WHERE email = $1`, [email]);
  }
}
