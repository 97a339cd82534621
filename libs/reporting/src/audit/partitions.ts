import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

type Querier = Pick<DataSource | EntityManager | QueryRunner, 'query'>;

/** `YYYY-MM` of an instant, in UTC (months of the activity log are UTC months). */
export function monthOf(date: Date | string): string {
  return new Date(date).toISOString().slice(0, 7);
}

/** `[start, end)` of a `YYYY-MM` month, as ISO instants. */
export function monthRange(month: string): [string, string] {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return [new Date(Date.UTC(y, m - 1, 1)).toISOString(), new Date(Date.UTC(y, m, 1)).toISOString()];
}

const MONTH = /^\d{4}-(0[1-9]|1[012])$/;

/**
 * Creates the partition of `reporting.activity_events` holding one UTC month, if missing. The
 * month is checked against a strict pattern before it is spliced into the DDL (identifiers and
 * bounds cannot be bound parameters). Two processes may race to create it: the loser's error is
 * ignored once the partition is seen to exist.
 */
export async function ensureMonthPartition(db: Querier, month: string): Promise<void> {
  if (!MONTH.test(month)) throw new Error(`bad month ${month}`);
  const [from, to] = monthRange(month);
  const name = `activity_events_${month.replace('-', '_')}`;
  try {
    await db.query(
      `CREATE TABLE IF NOT EXISTS reporting.${name} PARTITION OF reporting.activity_events FOR VALUES FROM ('${from}') TO ('${to}')`,
    );
  } catch (err) {
    const found: { r: string | null }[] = await db.query(`SELECT to_regclass($1)::text AS r`, [`reporting.${name}`]);
    if (!found[0]?.r) throw err;
  }
}
