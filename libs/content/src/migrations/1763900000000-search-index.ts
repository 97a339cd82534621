import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The search engine inside the content schema (docs/decisions/0011):
 * - `search_paragraphs`: one row per indexed paragraph with its text, position, kind, language,
 *   filter tags (resource + field + paragraph level, denormalised so a query reads one table),
 *   security groups, hidden flag and the resource's creation date;
 * - `search_postings` / `search_terms` / `search_stats`: an inverted index with the term and
 *   length statistics BM25 needs, kept per knowledge box;
 * - `search_vectors`: pgvector rows per paragraph and vectorset; an HNSW index per vectorset and
 *   dimension is created when the first vector of that shape arrives (a partial expression index).
 */
export class SearchIndex1763900000000 implements MigrationInterface {
  name = 'SearchIndex1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    await q.query(`ALTER TABLE content.resources ADD COLUMN search_tags text[] NOT NULL DEFAULT '{}'`);
    await q.query(`CREATE INDEX resources_search_tags_idx ON content.resources USING gin (search_tags)`);
    await q.query(`CREATE INDEX resources_kb_modified_idx ON content.resources (kbid, modified_at, id)`);
    await q.query(`CREATE INDEX resources_kb_title_idx ON content.resources (kbid, lower(title))`);
    await q.query(`CREATE TABLE content.search_paragraphs (
      id bigserial PRIMARY KEY,
      kbid uuid NOT NULL,
      rid uuid NOT NULL REFERENCES content.resources(id) ON DELETE CASCADE,
      field text NOT NULL,
      split text NOT NULL DEFAULT '',
      paragraph_id text NOT NULL,
      start_offset integer NOT NULL,
      end_offset integer NOT NULL,
      idx integer NOT NULL,
      page integer,
      text text NOT NULL,
      kind text NOT NULL DEFAULT 'TEXT',
      language text NOT NULL DEFAULT '',
      length integer NOT NULL,
      labels text[] NOT NULL DEFAULT '{}',
      ptags text[] NOT NULL DEFAULT '{}',
      tags text[] NOT NULL DEFAULT '{}',
      groups text[] NOT NULL DEFAULT '{}',
      hidden boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      CONSTRAINT search_paragraphs_kb_pid_key UNIQUE (kbid, paragraph_id)
    )`);
    await q.query(`CREATE INDEX search_paragraphs_rid_idx ON content.search_paragraphs (rid, field)`);
    await q.query(`CREATE INDEX search_paragraphs_tags_idx ON content.search_paragraphs USING gin (tags)`);
    await q.query(`CREATE TABLE content.search_postings (
      kbid uuid NOT NULL,
      term text NOT NULL,
      paragraph bigint NOT NULL REFERENCES content.search_paragraphs(id) ON DELETE CASCADE,
      tf integer NOT NULL,
      -- tf rides in the index so that BM25 reads postings by index-only scans once vacuumed
      PRIMARY KEY (kbid, term, paragraph) INCLUDE (tf)
    )`);
    await q.query(`CREATE INDEX search_postings_paragraph_idx ON content.search_postings (paragraph)`);
    await q.query(`CREATE TABLE content.search_terms (
      kbid uuid NOT NULL,
      term text NOT NULL,
      df integer NOT NULL,
      PRIMARY KEY (kbid, term)
    )`);
    await q.query(`CREATE TABLE content.search_stats (
      kbid uuid PRIMARY KEY,
      paragraphs bigint NOT NULL DEFAULT 0,
      total_length bigint NOT NULL DEFAULT 0,
      languages text[] NOT NULL DEFAULT '{}'
    )`);
    await q.query(`CREATE TABLE content.search_vectors (
      paragraph bigint NOT NULL REFERENCES content.search_paragraphs(id) ON DELETE CASCADE,
      vectorset text NOT NULL,
      kbid uuid NOT NULL,
      dimension integer NOT NULL,
      vector vector NOT NULL,
      PRIMARY KEY (paragraph, vectorset)
    )`);
    await q.query(`CREATE INDEX search_vectors_kb_idx ON content.search_vectors (kbid, vectorset)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS content.search_vectors`);
    await q.query(`DROP TABLE IF EXISTS content.search_stats`);
    await q.query(`DROP TABLE IF EXISTS content.search_terms`);
    await q.query(`DROP TABLE IF EXISTS content.search_postings`);
    await q.query(`DROP TABLE IF EXISTS content.search_paragraphs`);
    await q.query(`DROP INDEX IF EXISTS content.resources_kb_title_idx`);
    await q.query(`DROP INDEX IF EXISTS content.resources_kb_modified_idx`);
    await q.query(`ALTER TABLE content.resources DROP COLUMN IF EXISTS search_tags`);
  }
}
