import type { EntityManager } from 'typeorm';
import type { UsageRow } from './usage.service';

/**
 * Advisory lock key of the sealer ("ACTC" in ASCII): held by the transaction that seals and meters
 * a batch (taken with a try, so of several reporting processes one seals at a time), and by the
 * transactions that change which KBs are an account's (linking a KB, deleting one), which wait for
 * it. So `reporting.usage_hourly_accounts` never misses, nor counts twice, a batch sealed while a
 * KB's account was being learnt or the KB deleted.
 */
export const SEALER_LOCK = 0x41435443;

/** Waits until no batch is being sealed, and keeps sealing out until this transaction ends. */
export async function lockSealing(m: EntityManager): Promise<void> {
  await m.query(`SELECT pg_advisory_xact_lock($1)`, [SEALER_LOCK]);
}

/**
 * Account rollup (docs/decisions/0031): `reporting.usage_hourly_accounts` holds, per account, UTC
 * hour and metric, the sum of the `usage_hourly` rows of the KBs `kb_accounts` lists under the
 * account — what account-wide Get Usage reads, one row per hour and metric as a KB's are. These
 * functions are each transaction's share of keeping it so; every caller holds the sealer's lock.
 */

/**
 * Links KBs to their accounts (once: a KB never changes account). A KB linked now whose counters
 * were added before (its events sealed before its account was known) has those counters added to
 * its account's rows, in the same statement.
 */
export async function linkKbs(m: EntityManager, links: { kbid: string; account_id: string }[]): Promise<void> {
  if (links.length === 0) return;
  await m.query(
    `WITH linked AS (
       INSERT INTO reporting.kb_accounts (kbid, account_id)
       SELECT kbid, account_id FROM unnest($1::uuid[], $2::uuid[]) AS t(kbid, account_id)
       ON CONFLICT (kbid) DO NOTHING
       RETURNING kbid, account_id)
     INSERT INTO reporting.usage_hourly_accounts AS a (account_id, hour, metric, value)
     SELECT l.account_id, u.hour, u.metric, sum(u.value)
       FROM linked l JOIN reporting.usage_hourly u ON u.kbid = l.kbid
      WHERE u.value <> 0
      GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
     ON CONFLICT (account_id, hour, metric) DO UPDATE SET value = a.value + EXCLUDED.value`,
    [links.map((l) => l.kbid), links.map((l) => l.account_id)],
  );
}

/** Adds newly counted rows (`UsageService.rowsOf`) to the rows of their KBs' accounts, for the KBs linked to one. */
export async function addToAccounts(m: EntityManager, rows: UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  await m.query(
    `INSERT INTO reporting.usage_hourly_accounts AS a (account_id, hour, metric, value)
     SELECT k.account_id, t.hour, t.metric, sum(t.value)
       FROM jsonb_to_recordset($1::jsonb) AS t(kbid uuid, hour timestamptz, metric text, value double precision)
       JOIN reporting.kb_accounts k ON k.kbid = t.kbid
      GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
     ON CONFLICT (account_id, hour, metric) DO UPDATE SET value = a.value + EXCLUDED.value`,
    [JSON.stringify(rows)],
  );
}

/**
 * A KB about to be deleted (its link and rows going, its counters but `held` moving to the account's
 * own rows, `kbid` = `accountId`): what that changes in the account rollup, in one upsert — its rows
 * taken from the account it was linked to, and all but `held` given to `accountId` (linked to
 * itself). For the same account the two cancel exactly (x + −x = 0), so only the held metrics'
 * rows change.
 */
export async function moveKbOutOfAccount(m: EntityManager, kbid: string, accountId: string, held: string[]): Promise<void> {
  await m.query(
    `INSERT INTO reporting.usage_hourly_accounts AS a (account_id, hour, metric, value)
     SELECT account_id, hour, metric, sum(v) FROM (
       SELECT k.account_id, u.hour, u.metric, -u.value AS v
         FROM reporting.usage_hourly u JOIN reporting.kb_accounts k ON k.kbid = u.kbid
        WHERE u.kbid = $1 AND u.value <> 0
       UNION ALL
       SELECT $2::uuid, hour, metric, value FROM reporting.usage_hourly WHERE kbid = $1 AND metric <> ALL($3::text[]) AND value <> 0
     ) d
      GROUP BY 1, 2, 3
     HAVING sum(v) <> 0
      ORDER BY 1, 2, 3
     ON CONFLICT (account_id, hour, metric) DO UPDATE SET value = a.value + EXCLUDED.value`,
    [kbid, accountId, held],
  );
}
