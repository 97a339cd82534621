import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The paragraph's length rides in each posting, inside the postings index: BM25 then scores every
 * posting of the query's terms by an index-only scan, without a lookup into search_paragraphs per
 * posting (that join was ~60 % of a keyword query on SciFact). Filters still read the paragraphs,
 * but only for the best candidates (see keywordSearch).
 */
export class PostingsLength1764000000000 implements MigrationInterface {
  name = 'PostingsLength1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.search_postings ADD COLUMN length integer`);
    await q.query(`UPDATE content.search_postings po SET length = p.length FROM content.search_paragraphs p WHERE p.id = po.paragraph`);
    await q.query(`ALTER TABLE content.search_postings ALTER COLUMN length SET NOT NULL`);
    await q.query(`ALTER TABLE content.search_postings DROP CONSTRAINT search_postings_pkey`);
    await q.query(
      `ALTER TABLE content.search_postings ADD CONSTRAINT search_postings_pkey PRIMARY KEY (kbid, term, paragraph) INCLUDE (tf, length)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE content.search_postings DROP CONSTRAINT search_postings_pkey`);
    await q.query(
      `ALTER TABLE content.search_postings ADD CONSTRAINT search_postings_pkey PRIMARY KEY (kbid, term, paragraph) INCLUDE (tf)`,
    );
    await q.query(`ALTER TABLE content.search_postings DROP COLUMN length`);
  }
}
