import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ENTITIES_LIMITS,
  ErrorCodes,
  type CreateEntitiesGroupRequest,
  type EntitiesGroupDto,
  type EntitiesGroupRef,
  type EntityDto,
  type KbContentRef,
  type KnowledgeBoxEntitiesDto,
  type UpdateEntitiesGroupRequest,
  type ValidationIssue,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { memoryTags } from '../search/memory/memory-facets';
import { SearchMemoryService } from '../search/memory/search-memory.service';
import { likePrefix } from '../search/query/sql';
import { checkEntityMap } from './entity-map';

/** Groups found by processing that the list reads at most. */
const MAX_INDEXED_GROUPS = 1000;
/** Entity values a user's deletions hide at most per group. */
const MAX_DELETED_PER_GROUP = 10_000;
/** Answers of the SQL path kept (per KB and question, valid while the KB's index generation stays). */
const SQL_CACHE_ENTRIES = 500;

interface GroupRow {
  id: string;
  title: string | null;
  color: string | null;
  custom: boolean;
  entities: Record<string, EntityDto>;
  deleted_entities: string[];
  deleted: boolean;
}

const notFound = (group: string) => new DomainError(ErrorCodes.NOT_FOUND, `Entities group '${group}' does not exist`);
const entityOf = (value: string): EntityDto => ({ value, merged: false, represents: [] });

/**
 * Entities groups of a KB (API-MAP 3, docs/decisions/0018). A group is either custom (created by a
 * user, its entities stored here) or found by processing (its entities are the index's
 * `/e/<group>/<value>` tags); a group processing found can also be given a title, colour and extra
 * entities, and entities — or the group — deleted: a deletion hides what the index holds.
 */
@Injectable()
export class EntitiesGroupsService {
  /**
   * The SQL path reads every paragraph of the KB (a large KB is the one the memory index does not
   * hold): its answers are kept until the KB's index generation moves, so repeated reads of a large
   * KB cost one indexed lookup each.
   */
  private readonly sqlCache = new Map<string, { generation: string; value: string[] }>();

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly memory: SearchMemoryService,
  ) {}

  async list(ref: KbContentRef): Promise<KnowledgeBoxEntitiesDto> {
    const [rows, indexed] = await Promise.all([this.rows(ref.kbid), this.indexedGroups(ref.kbid)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const groups: KnowledgeBoxEntitiesDto['groups'] = {};
    for (const id of indexed) if (!byId.has(id)) groups[id] = { title: null, color: null, custom: false, entities: {} };
    for (const r of rows) if (!r.deleted) groups[r.id] = { title: r.title, color: r.color, custom: r.custom, entities: {} };
    return { uuid: ref.kbid, groups: Object.fromEntries(Object.entries(groups).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
  }

  async get(ref: EntitiesGroupRef): Promise<EntitiesGroupDto> {
    const row = await this.row(ref.kbid, ref.group);
    if (row?.deleted) throw notFound(ref.group);
    const indexed = await this.indexedValues(ref.kbid, ref.group, ENTITIES_LIMITS.listedPerGroup);
    if (!row && indexed.length === 0) throw notFound(ref.group);
    const hidden = new Set(row?.deleted_entities ?? []);
    const stored = row?.entities ?? {};
    const entities: Record<string, EntityDto> = { ...stored };
    for (const value of indexed) {
      if (Object.keys(entities).length >= ENTITIES_LIMITS.listedPerGroup) break;
      if (!hidden.has(value) && !(value in entities)) entities[value] = entityOf(value);
    }
    return { title: row?.title ?? null, color: row?.color ?? null, custom: row?.custom ?? false, entities };
  }

  async create(req: CreateEntitiesGroupRequest): Promise<Record<string, never>> {
    const { group } = req.body;
    const issues: ValidationIssue[] = [];
    const entities = checkEntityMap(req.body.entities, ['body', 'entities'], issues);
    if (Object.keys(entities).length > ENTITIES_LIMITS.entitiesPerGroup) {
      issues.push({
        loc: ['body', 'entities'],
        msg: `A group holds at most ${ENTITIES_LIMITS.entitiesPerGroup} entities`,
        type: 'too_long',
      });
    }
    if (issues.length) throw DomainError.validation(issues);
    const row = await this.row(req.kbid, group);
    if ((row && !row.deleted) || (!row && (await this.indexedValues(req.kbid, group, 1)).length > 0)) {
      throw new DomainError(ErrorCodes.CONFLICT, `Entities group ${group} already exists`);
    }
    if (!row) await this.checkRoom(req.kbid);
    await this.save(req.kbid, {
      id: group,
      title: req.body.title ?? null,
      color: req.body.color ?? null,
      custom: true,
      entities,
      deleted_entities: [],
      deleted: false,
    });
    return {};
  }

  async update(req: UpdateEntitiesGroupRequest): Promise<Record<string, never>> {
    const issues: ValidationIssue[] = [];
    const add = checkEntityMap(req.body.add, ['body', 'add'], issues);
    const update = checkEntityMap(req.body.update, ['body', 'update'], issues);
    if (issues.length) throw DomainError.validation(issues);
    const row = await this.row(req.kbid, req.group);
    if (row?.deleted || (!row && (await this.indexedValues(req.kbid, req.group, 1)).length === 0)) throw notFound(req.group);
    const entities = { ...(row?.entities ?? {}), ...add, ...update };
    const deleted = new Set(row?.deleted_entities ?? []);
    for (const key of Object.keys({ ...add, ...update })) deleted.delete(key);
    for (const key of req.body.delete ?? []) {
      delete entities[key];
      deleted.add(key);
    }
    if (Object.keys(entities).length > ENTITIES_LIMITS.entitiesPerGroup) {
      issues.push({ loc: ['body', 'add'], msg: `A group holds at most ${ENTITIES_LIMITS.entitiesPerGroup} entities`, type: 'too_long' });
    }
    if (deleted.size > MAX_DELETED_PER_GROUP)
      issues.push({ loc: ['body', 'delete'], msg: `A group hides at most ${MAX_DELETED_PER_GROUP} deleted entities`, type: 'too_long' });
    if (issues.length) throw DomainError.validation(issues);
    if (!row) await this.checkRoom(req.kbid);
    await this.save(req.kbid, {
      id: req.group,
      title: req.body.title ?? row?.title ?? null,
      color: req.body.color ?? row?.color ?? null,
      custom: row?.custom ?? false,
      entities,
      deleted_entities: [...deleted],
      deleted: false,
    });
    return {};
  }

  async delete(ref: EntitiesGroupRef): Promise<Record<string, never>> {
    const row = await this.row(ref.kbid, ref.group);
    const indexed = (await this.indexedValues(ref.kbid, ref.group, 1)).length > 0;
    if (row?.deleted || (!row && !indexed)) throw notFound(ref.group);
    // A group the index still holds stays as a deletion mark, else it would come back at once.
    if (indexed)
      await this.save(ref.kbid, {
        id: ref.group,
        title: null,
        color: null,
        custom: false,
        entities: {},
        deleted_entities: [],
        deleted: true,
      });
    else await this.ds.query(`DELETE FROM content.entities_groups WHERE kbid = $1 AND id = $2`, [ref.kbid, ref.group]);
    return {};
  }

  /**
   * `/suggest` entities: those the index found (already filtered by the request's scope) minus the
   * users' deletions, then stored entities whose value starts with `prefix`, at most `limit`.
   */
  async suggestions(
    kbid: string,
    prefix: string,
    found: { family: string; value: string }[],
    limit: number,
  ): Promise<{ family: string; value: string }[]> {
    const rows = await this.rows(kbid);
    if (rows.length === 0) return found.slice(0, limit);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const out = found.filter((e) => {
      const r = byId.get(e.family);
      return !r || (!r.deleted && !r.deleted_entities.includes(e.value));
    });
    const seen = new Set(out.map((e) => `${e.family}\0${e.value}`));
    for (const r of rows) {
      if (r.deleted) continue;
      for (const e of Object.values(r.entities)) {
        if (out.length >= limit) return out;
        const key = `${r.id}\0${e.value}`;
        if (!seen.has(key) && e.value.toLowerCase().startsWith(prefix)) {
          seen.add(key);
          out.push({ family: r.id, value: e.value });
        }
      }
    }
    return out.slice(0, limit);
  }

  private async rows(kbid: string): Promise<GroupRow[]> {
    return (await this.ds.query(
      `SELECT id, title, color, custom, entities, deleted_entities, deleted FROM content.entities_groups WHERE kbid = $1 ORDER BY id LIMIT ${ENTITIES_LIMITS.groupsPerKb * 2}`,
      [kbid],
    )) as GroupRow[];
  }

  private async row(kbid: string, id: string): Promise<GroupRow | undefined> {
    const rows = (await this.ds.query(
      `SELECT id, title, color, custom, entities, deleted_entities, deleted FROM content.entities_groups WHERE kbid = $1 AND id = $2`,
      [kbid, id],
    )) as GroupRow[];
    return rows[0];
  }

  /** A new stored group must fit the KB's bound (deletion marks of groups the index holds count too). */
  private async checkRoom(kbid: string): Promise<void> {
    const [{ n }] = (await this.ds.query(`SELECT count(*)::int AS n FROM content.entities_groups WHERE kbid = $1`, [kbid])) as [
      { n: number },
    ];
    if (n >= ENTITIES_LIMITS.groupsPerKb) {
      throw DomainError.validation([
        {
          loc: ['body', 'group'],
          msg: `A Knowledge Box keeps at most ${ENTITIES_LIMITS.groupsPerKb} entities groups of its own`,
          type: 'too_long',
        },
      ]);
    }
  }

  private async save(kbid: string, r: GroupRow): Promise<void> {
    await this.ds.query(
      `INSERT INTO content.entities_groups (kbid, id, title, color, custom, entities, deleted_entities, deleted, modified_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::text[], $8, now())
       ON CONFLICT (kbid, id) DO UPDATE SET title = EXCLUDED.title, color = EXCLUDED.color, custom = EXCLUDED.custom, entities = EXCLUDED.entities,
         deleted_entities = EXCLUDED.deleted_entities, deleted = EXCLUDED.deleted, modified_at = now()`,
      [kbid, r.id, r.title, r.color, r.custom, JSON.stringify(r.entities), r.deleted_entities, r.deleted],
    );
  }

  /** The entity families (`/e/<family>/…` tags) of the KB's index: the memory index when current, else SQL. */
  private async indexedGroups(kbid: string): Promise<string[]> {
    const index = await this.memory.current(kbid);
    if (index) {
      const families = new Set<string>();
      for (const tag of memoryTags(index, index.mask({ showHidden: true }), (t) => t.startsWith('/e/'), Number.POSITIVE_INFINITY)) {
        families.add(tag.slice(3).split('/')[0] as string);
        if (families.size >= MAX_INDEXED_GROUPS) break;
      }
      return [...families];
    }
    return this.cachedSql(kbid, '', async () => {
      const rows = (await this.ds.query(
        `SELECT DISTINCT split_part(substr(tg, 4), '/', 1) COLLATE "C" AS family FROM content.search_paragraphs p, unnest(p.tags) AS tg
          WHERE p.kbid = $1 AND tg LIKE '/e/%' ORDER BY 1 LIMIT ${MAX_INDEXED_GROUPS}`,
        [kbid],
      )) as { family: string }[];
      return rows.map((r) => r.family).filter((f) => f !== '');
    });
  }

  /** The values of one family in the KB's index, in byte order, at most `limit`. */
  private async indexedValues(kbid: string, group: string, limit: number): Promise<string[]> {
    const prefix = `/e/${group}/`;
    const index = await this.memory.current(kbid);
    const tags = index
      ? memoryTags(index, index.mask({ showHidden: true }), (t) => t.startsWith(prefix), limit)
      : await this.cachedSql(kbid, `${group}\0${limit}`, async () =>
          (
            (await this.ds.query(
              `SELECT DISTINCT tg COLLATE "C" AS tag FROM content.search_paragraphs p, unnest(p.tags) AS tg WHERE p.kbid = $1 AND tg LIKE $2 ORDER BY 1 LIMIT ${limit}`,
              [kbid, likePrefix(prefix)],
            )) as { tag: string }[]
          ).map((r) => r.tag),
        );
    return tags.map((t) => t.slice(prefix.length)).filter((v) => v !== '');
  }

  /** `compute` once per KB index generation (none yet: the KB has no paragraphs, so nothing is found). */
  private async cachedSql(kbid: string, question: string, compute: () => Promise<string[]>): Promise<string[]> {
    const rows = (await this.ds.query(`SELECT generation::text AS generation FROM content.search_stats WHERE kbid = $1`, [kbid])) as {
      generation: string;
    }[];
    const generation = rows[0]?.generation;
    if (generation === undefined) return [];
    const key = `${kbid}\0${question}`;
    const hit = this.sqlCache.get(key);
    this.sqlCache.delete(key);
    if (hit && hit.generation === generation) {
      this.sqlCache.set(key, hit);
      return hit.value;
    }
    const value = await compute();
    this.sqlCache.set(key, { generation, value });
    if (this.sqlCache.size > SQL_CACHE_ENTRIES) this.sqlCache.delete(this.sqlCache.keys().next().value as string);
    return value;
  }
}
