import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ContentInitial1763800000000 implements MigrationInterface {
  name = 'ContentInitial1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE content.seqid_seq`);
    await q.query(`CREATE TABLE content.resources (
      id uuid PRIMARY KEY,
      kbid uuid NOT NULL,
      slug text NOT NULL,
      title text NOT NULL DEFAULT '',
      summary text NOT NULL DEFAULT '',
      icon text NOT NULL DEFAULT '',
      thumbnail text NOT NULL DEFAULT '',
      metadata jsonb NOT NULL DEFAULT '{}',
      usermetadata jsonb NOT NULL DEFAULT '{}',
      fieldmetadata jsonb NOT NULL DEFAULT '[]',
      computedmetadata jsonb NOT NULL DEFAULT '{}',
      origin jsonb NOT NULL DEFAULT '{}',
      extra jsonb NOT NULL DEFAULT '{}',
      relations jsonb NOT NULL DEFAULT '[]',
      access_groups jsonb NOT NULL DEFAULT '[]',
      hidden boolean NOT NULL DEFAULT false,
      status text NOT NULL DEFAULT 'PENDING',
      created_at timestamptz NOT NULL,
      modified_at timestamptz NOT NULL,
      last_seqid bigint NOT NULL,
      CONSTRAINT resources_kb_slug_key UNIQUE (kbid, slug)
    )`);
    await q.query(`CREATE INDEX resources_kb_created_idx ON content.resources (kbid, created_at, id)`);
    await q.query(`CREATE TABLE content.fields (
      rid uuid NOT NULL REFERENCES content.resources(id) ON DELETE CASCADE,
      field_type text NOT NULL CHECK (field_type IN ('text', 'file', 'link', 'conversation')),
      field_id text NOT NULL,
      kbid uuid NOT NULL,
      value jsonb NOT NULL,
      extracted jsonb,
      status text NOT NULL DEFAULT 'PENDING',
      error jsonb,
      errors jsonb NOT NULL DEFAULT '[]',
      seqid bigint NOT NULL,
      modified_at timestamptz NOT NULL,
      PRIMARY KEY (rid, field_type, field_id)
    )`);
    await q.query(`CREATE INDEX fields_kb_idx ON content.fields (kbid)`);
    await q.query(`CREATE TABLE content.outbox (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('queue', 'event', 'blob_cleanup')),
      target text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}',
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      next_attempt_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX outbox_due_idx ON content.outbox (next_attempt_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS content.outbox`);
    await q.query(`DROP TABLE IF EXISTS content.fields`);
    await q.query(`DROP TABLE IF EXISTS content.resources`);
    await q.query(`DROP SEQUENCE IF EXISTS content.seqid_seq`);
  }
}
