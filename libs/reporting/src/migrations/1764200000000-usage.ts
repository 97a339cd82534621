import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage metering (issue 19): counters pre-aggregated by KB, UTC hour and metric, so Get Usage sums
 * at most one row per hour, KB and metric (a year of hourly buckets of a KB is ~9 k rows per metric,
 * read by one range of the primary key). The account of each KB (learnt from the accounts service;
 * not needed to count, so counting never waits for it), and the blocks decided for each account in a
 * UTC month.
 */
export class Usage1764200000000 implements MigrationInterface {
  name = 'Usage1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.usage_hourly (
      kbid uuid NOT NULL,
      hour timestamptz NOT NULL,
      metric text NOT NULL,
      value double precision NOT NULL DEFAULT 0,
      PRIMARY KEY (kbid, hour, metric)
    )`);
    await q.query(`CREATE TABLE reporting.kb_accounts (kbid uuid PRIMARY KEY, account_id uuid NOT NULL)`);
    await q.query(`CREATE INDEX kb_accounts_account_idx ON reporting.kb_accounts (account_id)`);
    await q.query(`CREATE TABLE reporting.account_blocks (
      account_id uuid PRIMARY KEY,
      month text NOT NULL,
      features jsonb NOT NULL DEFAULT '[]',
      kbs jsonb NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.account_blocks`);
    await q.query(`DROP TABLE reporting.kb_accounts`);
    await q.query(`DROP TABLE reporting.usage_hourly`);
  }
}
