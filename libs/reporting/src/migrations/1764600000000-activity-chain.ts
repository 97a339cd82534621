import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tamper evidence for the activity log (issue 19, docs/activity.md): each record gets a position in
 * the chain of its KB and event type (`chain_seq`) and a hash (`chain_hash`) over the previous
 * record's hash and its own stored members; `activity_chain_heads` holds each chain's end. Records
 * stored before this migration are sealed by the background sealer like new ones.
 */
export class ActivityChain1764600000000 implements MigrationInterface {
  name = 'ActivityChain1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting.activity_events ADD COLUMN chain_seq bigint, ADD COLUMN chain_hash text`);
    // What the sealer has still to do, oldest first; and each chain in order, for verification.
    await q.query(`CREATE INDEX activity_events_unsealed_idx ON reporting.activity_events (id) WHERE chain_seq IS NULL`);
    await q.query(
      `CREATE INDEX activity_events_chain_idx ON reporting.activity_events (kbid, type, chain_seq) WHERE chain_seq IS NOT NULL`,
    );
    await q.query(
      `CREATE TABLE reporting.activity_chain_heads (kbid uuid NOT NULL, type text NOT NULL, seq bigint NOT NULL, hash text NOT NULL, PRIMARY KEY (kbid, type))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.activity_chain_heads`);
    await q.query(`DROP INDEX reporting.activity_events_chain_idx`);
    await q.query(`DROP INDEX reporting.activity_events_unsealed_idx`);
    await q.query(`ALTER TABLE reporting.activity_events DROP COLUMN chain_hash, DROP COLUMN chain_seq`);
  }
}
