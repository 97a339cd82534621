import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Entities groups a KB's users keep (`/entitiesgroups`): custom groups with their entities, and
 * what users changed on the groups processing found (a title, entities added, entities or the
 * whole group deleted). The entities processing found stay in the search index (`/e/` tags).
 */
export class EntitiesGroups1764950000000 implements MigrationInterface {
  name = 'EntitiesGroups1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE content.entities_groups (
      kbid uuid NOT NULL,
      id text NOT NULL,
      title text,
      color text,
      custom boolean NOT NULL,
      entities jsonb NOT NULL DEFAULT '{}'::jsonb,
      deleted_entities text[] NOT NULL DEFAULT '{}',
      deleted boolean NOT NULL DEFAULT false,
      modified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (kbid, id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE content.entities_groups`);
  }
}
