import type { MigrationInterface, QueryRunner } from 'typeorm';
import { outboxTableSql } from '@kb/platform/outbox';

/**
 * The accounts outbox (@kb/platform/outbox): events decided by a write (a KB deleted, keys revoked,
 * access changed) are stored in the write's transaction and published after commit, so a crash
 * between the two delays them instead of losing them.
 */
export class Outbox1764900000000 implements MigrationInterface {
  name = 'Outbox1764900000000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of outboxTableSql('accounts')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS accounts.outbox`);
  }
}
