import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UsersSignIn1763810000000 implements MigrationInterface {
  name = 'UsersSignIn1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts.users ADD COLUMN avatar text`);
    // Failed sign-ins per e-mail address: enough to lock an address out for a while after repeated failures.
    await q.query(`CREATE TABLE accounts.sign_in_failures (
      email text PRIMARY KEY,
      failures integer NOT NULL,
      window_start timestamptz NOT NULL,
      locked_until timestamptz
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.sign_in_failures`);
    await q.query(`ALTER TABLE accounts.users DROP COLUMN IF EXISTS avatar`);
  }
}
