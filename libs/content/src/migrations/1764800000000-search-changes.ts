import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each index generation changed (docs/decisions/0014), so that a process holding a KB's index
 * in memory can bring it up to date instead of reading it all again.
 *
 * Every statement that writes a KB's paragraphs (`search_paragraphs`) or term statistics
 * (`search_terms`) still sets a new generation, now with a row in `search_changes`: the generation
 * it replaced (`prev`), the one it set, and the paragraph ids or terms it touched. The row lock on
 * `search_stats` orders the writers of a KB, so `prev` is exactly the generation the statement
 * replaced, and the rows form a chain from any generation to the current one. A generation set
 * any other way (a dropped vectorset, a statistics row deleted and created again) has no row: the
 * chain breaks there, and the index is read again in full. The search maintenance pass deletes rows
 * older than 15 minutes (an index that far behind is read again in full as well).
 */
export class SearchChanges1764800000000 implements MigrationInterface {
  name = 'SearchChanges1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.search_changes (
      kbid uuid NOT NULL,
      prev bigint NOT NULL,
      generation bigint NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      paragraphs bigint[] NOT NULL DEFAULT '{}',
      terms text[] NOT NULL DEFAULT '{}',
      PRIMARY KEY (kbid, prev)
    )`);
    for (const [name, column, list] of [
      ['paragraphs', 'id', 'paragraphs'],
      ['terms', 'term', 'terms'],
    ] as const) {
      await q.query(`CREATE OR REPLACE FUNCTION content.search_generation_next_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          r record;
          g bigint;
        BEGIN
          FOR r IN SELECT s.kbid, s.generation FROM content.search_stats s WHERE s.kbid IN (SELECT DISTINCT kbid FROM changed) ORDER BY s.kbid FOR UPDATE LOOP
            g := nextval('content.search_generation');
            UPDATE content.search_stats SET generation = g WHERE kbid = r.kbid;
            INSERT INTO content.search_changes (kbid, prev, generation, ${list})
              VALUES (r.kbid, r.generation, g, ARRAY(SELECT DISTINCT c.${column} FROM changed c WHERE c.kbid = r.kbid));
          END LOOP;
          RETURN NULL;
        END $$`);
    }
    for (const [event, table] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ]) {
      const e = event.toLowerCase();
      await q.query(`DROP TRIGGER search_paragraphs_generation_${e} ON content.search_paragraphs`);
      await q.query(
        `CREATE TRIGGER search_paragraphs_generation_${e} AFTER ${event} ON content.search_paragraphs
           REFERENCING ${table} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION content.search_generation_next_paragraphs()`,
      );
      await q.query(
        `CREATE TRIGGER search_terms_generation_${e} AFTER ${event} ON content.search_terms
           REFERENCING ${table} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION content.search_generation_next_terms()`,
      );
    }
    await q.query(`DROP FUNCTION content.search_generation_next()`);
  }

  async down(q: QueryRunner): Promise<void> {
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
      const e = event.toLowerCase();
      await q.query(`DROP TRIGGER search_terms_generation_${e} ON content.search_terms`);
      await q.query(`DROP TRIGGER search_paragraphs_generation_${e} ON content.search_paragraphs`);
      await q.query(
        `CREATE TRIGGER search_paragraphs_generation_${e} AFTER ${event} ON content.search_paragraphs
           REFERENCING ${table} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION content.search_generation_next()`,
      );
    }
    await q.query(`DROP FUNCTION content.search_generation_next_paragraphs()`);
    await q.query(`DROP FUNCTION content.search_generation_next_terms()`);
    await q.query(`DROP TABLE content.search_changes`);
  }
}
