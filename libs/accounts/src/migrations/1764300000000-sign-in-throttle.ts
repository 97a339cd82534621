import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed sign-ins counted per client address and per (e-mail, address), not per e-mail alone: a
 * count per e-mail let anyone lock the owner of an address out.
 */
export class SignInThrottle1764300000000 implements MigrationInterface {
  name = 'SignInThrottle1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.sign_in_failures`);
    await q.query(`CREATE TABLE accounts.sign_in_throttle (
      key text PRIMARY KEY,
      failures integer NOT NULL,
      last_failure timestamptz NOT NULL
    )`);
    // Pruning forgotten keys scans by age.
    await q.query(`CREATE INDEX sign_in_throttle_last_failure ON accounts.sign_in_throttle (last_failure)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.sign_in_throttle`);
    await q.query(
      `CREATE TABLE accounts.sign_in_failures (email text PRIMARY KEY, failures integer NOT NULL, window_start timestamptz NOT NULL, locked_until timestamptz)`,
    );
  }
}
