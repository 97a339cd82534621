import type { MigrationInterface, QueryRunner } from 'typeorm';
import { SEALER_LOCK } from '../usage/usage-accounts';

/**
 * Account rollup of the usage counters (docs/decisions/0031-account-usage-rollup.md): per account,
 * UTC hour and metric, the sum of its KBs' `usage_hourly` rows, kept in the transactions that change
 * either (sealing, linking a KB to its account, deleting a KB), so account-wide Get Usage reads one
 * row per hour and metric instead of grouping every KB's. Filled here from the rows so far, under
 * the sealer's lock (no batch sealed meanwhile).
 */
export class UsageAccounts1764890000000 implements MigrationInterface {
  name = 'UsageAccounts1764890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.usage_hourly_accounts (
      account_id uuid NOT NULL,
      hour timestamptz NOT NULL,
      metric text NOT NULL,
      value double precision NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, hour, metric)
    )`);
    await q.query(`SELECT pg_advisory_xact_lock($1)`, [SEALER_LOCK]);
    await q.query(`INSERT INTO reporting.usage_hourly_accounts (account_id, hour, metric, value)
      SELECT k.account_id, u.hour, u.metric, sum(u.value)
        FROM reporting.usage_hourly u JOIN reporting.kb_accounts k ON k.kbid = u.kbid
       WHERE u.value <> 0
       GROUP BY 1, 2, 3`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.usage_hourly_accounts`);
  }
}
