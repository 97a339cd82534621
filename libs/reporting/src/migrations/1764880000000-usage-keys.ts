import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage of understanding-API (NUA) keys (Get Usage `nua_key_id`, docs/usage.md): the counters of
 * the events a key caused — its pushes and the processing of the fields it pushed — also kept per
 * key, KB, UTC hour and metric, added in the same transaction as `usage_hourly` (so exactly once).
 */
export class UsageKeys1764880000000 implements MigrationInterface {
  name = 'UsageKeys1764880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.usage_hourly_keys (
      nua_key_id uuid NOT NULL,
      kbid uuid NOT NULL,
      hour timestamptz NOT NULL,
      metric text NOT NULL,
      value double precision NOT NULL DEFAULT 0,
      PRIMARY KEY (nua_key_id, kbid, hour, metric)
    )`);
    await q.query(`CREATE INDEX usage_hourly_keys_kb_idx ON reporting.usage_hourly_keys (kbid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.usage_hourly_keys`);
  }
}
