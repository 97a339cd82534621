import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where in its recording a TRANSCRIPT paragraph is said (seconds from the start), so that search
 * results can point a player at it (`position.start_seconds` / `end_seconds`). NULL for every other
 * paragraph, and for transcripts indexed before this column (a reindex fills it).
 */
export class ParagraphSeconds1764900000000 implements MigrationInterface {
  name = 'ParagraphSeconds1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.search_paragraphs ADD COLUMN start_seconds float8, ADD COLUMN end_seconds float8`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.search_paragraphs DROP COLUMN start_seconds, DROP COLUMN end_seconds`);
  }
}
