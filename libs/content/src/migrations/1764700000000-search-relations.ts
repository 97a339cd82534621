import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A stored relation `r` the index takes: a known type, a destination, and a valid source if it names one. */
const VALID_RELATION = `upper(r->>'relation') IN ('ABOUT', 'CHILD', 'COLAB', 'ENTITY', 'OTHER', 'SYNONYM')
         AND coalesce(btrim(r->'to'->>'value'), '') <> '' AND lower(r->'to'->>'type') IN ('entity', 'label', 'resource', 'user')
         AND (r->'from' IS NULL OR jsonb_typeof(r->'from') = 'null'
              OR (coalesce(btrim(r->'from'->>'value'), '') <> '' AND lower(r->'from'->>'type') IN ('entity', 'label', 'resource', 'user')))`;

/**
 * The knowledge graph of the index (`/graph`, `/graph/nodes`, `/graph/relations`): one row per edge,
 * from processing (a field's relations) or from the resource itself (user relations, ABOUT its
 * labels; `field` ''). Existing content is carried over from what is stored, with the rules of
 * search/index/relations-index.ts.
 */
export class SearchRelations1764700000000 implements MigrationInterface {
  name = 'SearchRelations1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.search_relations (
      id bigserial PRIMARY KEY,
      kbid uuid NOT NULL,
      rid uuid NOT NULL REFERENCES content.resources(id) ON DELETE CASCADE,
      field text NOT NULL,
      source_value text NOT NULL,
      source_type text NOT NULL,
      source_group text NOT NULL DEFAULT '',
      relation text NOT NULL,
      label text NOT NULL DEFAULT '',
      dest_value text NOT NULL,
      dest_type text NOT NULL,
      dest_group text NOT NULL DEFAULT '',
      paragraph text,
      generated text NOT NULL
    )`);
    await q.query(`CREATE INDEX search_relations_rid_idx ON content.search_relations (rid, field)`);
    await q.query(`CREATE INDEX search_relations_source_idx ON content.search_relations (kbid, lower(source_value))`);
    await q.query(`CREATE INDEX search_relations_dest_idx ON content.search_relations (kbid, lower(dest_value))`);

    // Processing's relations of every field (and split) already stored.
    await q.query(`
      WITH meta AS (
        SELECT f.kbid, f.rid,
               (CASE f.field_type WHEN 'text' THEN 't' WHEN 'file' THEN 'f' WHEN 'link' THEN 'u' ELSE 'c' END) || '/' || f.field_id AS field,
               m.value AS metadata
          FROM content.fields f
          CROSS JOIN LATERAL (
            SELECT f.extracted->'metadata'->'metadata' AS value
            UNION ALL SELECT s.value FROM jsonb_each(CASE WHEN jsonb_typeof(f.extracted->'metadata'->'split_metadata') = 'object' THEN f.extracted->'metadata'->'split_metadata' ELSE '{}'::jsonb END) s
          ) m
         WHERE f.extracted IS NOT NULL
      ), rel AS (
        SELECT meta.kbid, meta.rid, meta.field, r.value AS r
          FROM meta CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(meta.metadata->'relations') = 'array' THEN meta.metadata->'relations' ELSE '[]'::jsonb END) r
      )
      INSERT INTO content.search_relations (kbid, rid, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated)
      SELECT DISTINCT kbid, rid, field,
             coalesce(btrim(r->'from'->>'value'), rid::text), lower(coalesce(r->'from'->>'type', 'resource')), coalesce(r->'from'->>'group', ''),
             upper(r->>'relation'), coalesce(r->>'label', ''),
             btrim(r->'to'->>'value'), lower(r->'to'->>'type'), coalesce(r->'to'->>'group', ''),
             nullif(r->'metadata'->>'paragraph_id', ''), 'processor'
        FROM rel
       WHERE ${VALID_RELATION}`);

    // The resources' own edges: user relations, and ABOUT each classification label.
    await q.query(`
      INSERT INTO content.search_relations (kbid, rid, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated)
      SELECT DISTINCT x.kbid, x.id, '',
             coalesce(btrim(r->'from'->>'value'), x.id::text), lower(coalesce(r->'from'->>'type', 'resource')), coalesce(r->'from'->>'group', ''),
             upper(r->>'relation'), coalesce(r->>'label', ''),
             btrim(r->'to'->>'value'), lower(r->'to'->>'type'), coalesce(r->'to'->>'group', ''),
             nullif(r->'metadata'->>'paragraph_id', ''), 'user'
        FROM content.resources x
        CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(x.usermetadata->'relations') = 'array' THEN x.usermetadata->'relations' ELSE '[]'::jsonb END) r
       WHERE ${VALID_RELATION}`);
    await q.query(`
      INSERT INTO content.search_relations (kbid, rid, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated)
      SELECT DISTINCT x.kbid, x.id, '', x.id::text, 'resource', '', 'ABOUT', '', (c->>'labelset') || '/' || (c->>'label'), 'label', c->>'labelset', NULL::text, 'user'
        FROM content.resources x
        CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(x.usermetadata->'classifications') = 'array' THEN x.usermetadata->'classifications' ELSE '[]'::jsonb END) c
       WHERE coalesce(c->>'labelset', '') <> '' AND coalesce(c->>'label', '') <> '' AND coalesce(c->>'cancelled_by_user', 'false') <> 'true'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.search_relations`);
  }
}
