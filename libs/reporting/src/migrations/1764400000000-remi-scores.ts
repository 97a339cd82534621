import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * REMi scores of `/ask` answers (spec 4.4, docs/remi.md): one row per scored chat record, written by
 * the scorer in the background. `event_row` is the activity record's id (the id Query Rag Requests
 * By Scores and the events route show). Aggregates per record (average, min and max of the context
 * relevance, average of the groundedness) are kept beside the arrays so that filters and time
 * aggregation read numbers, not arrays. `reporting.remi_cursor` is the scorer's position in the
 * activity log (the highest record id it has seen) and its lease, so that of several reporting
 * processes one scores at a time without a transaction held open across scoring.
 */
export class RemiScores1764400000000 implements MigrationInterface {
  name = 'RemiScores1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE reporting.remi_scores (
      event_row bigint PRIMARY KEY,
      kbid uuid NOT NULL,
      date timestamptz NOT NULL,
      status text NOT NULL,
      answer_relevance smallint NOT NULL,
      answer_reason text NOT NULL,
      context_relevance smallint[] NOT NULL,
      groundedness smallint[] NOT NULL,
      context_avg real,
      context_min real,
      context_max real,
      groundedness_avg real,
      scorer text NOT NULL
    )`);
    await q.query(`CREATE INDEX remi_scores_kb_date_idx ON reporting.remi_scores (kbid, date, event_row)`);
    // Chat records by id, for the scorer's scan past its cursor.
    await q.query(`CREATE INDEX activity_events_chat_id_idx ON reporting.activity_events (id) WHERE type = 'chat'`);
    await q.query(
      `CREATE TABLE reporting.remi_cursor (one boolean PRIMARY KEY DEFAULT true CHECK (one), last_row bigint NOT NULL, lease_until timestamptz NOT NULL)`,
    );
    await q.query(`INSERT INTO reporting.remi_cursor (last_row, lease_until) VALUES (0, '-infinity')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting.remi_cursor`);
    await q.query(`DROP INDEX reporting.activity_events_chat_id_idx`);
    await q.query(`DROP TABLE reporting.remi_scores`);
  }
}
