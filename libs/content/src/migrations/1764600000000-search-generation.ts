import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A generation per knowledge box's search index (docs/decisions/0014): every statement that
 * inserts, updates or deletes paragraphs of a KB (`search_paragraphs`; postings, vectors and term
 * statistics only change with them) sets `search_stats.generation` to a new value of one sequence,
 * by a statement-level trigger, in the writer's transaction — whichever replica, code path or
 * repair script wrote. A process holding the index in memory learns from one cheap read that it is
 * stale. A sequence (not a counter) never repeats a value, even for a KB whose statistics row is
 * deleted and created again. Dropping a vectorset deletes vectors alone and sets it explicitly.
 */
export class SearchGeneration1764600000000 implements MigrationInterface {
  name = 'SearchGeneration1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE content.search_generation`);
    await q.query(`ALTER TABLE content.search_stats ADD COLUMN generation bigint NOT NULL DEFAULT nextval('content.search_generation')`);
    await q.query(`CREATE FUNCTION content.search_generation_next() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE content.search_stats SET generation = nextval('content.search_generation') WHERE kbid IN (SELECT DISTINCT kbid FROM changed);
        RETURN NULL;
      END $$`);
    for (const [event, table] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ]) {
      await q.query(
        `CREATE TRIGGER search_paragraphs_generation_${event.toLowerCase()} AFTER ${event} ON content.search_paragraphs
           REFERENCING ${table} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION content.search_generation_next()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const event of ['insert', 'update', 'delete'])
      await q.query(`DROP TRIGGER search_paragraphs_generation_${event} ON content.search_paragraphs`);
    await q.query(`DROP FUNCTION content.search_generation_next()`);
    await q.query(`ALTER TABLE content.search_stats DROP COLUMN generation`);
    await q.query(`DROP SEQUENCE content.search_generation`);
  }
}
