import { asRow, insertStatement, type InsertPart } from '@kb/platform/database';
import { Inject, Injectable } from '@nestjs/common';
import { Coalescer } from '@kb/platform/messaging';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCodes, type ContentFieldType, type KbCountersDto, type ResourceRef } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FieldEntity } from '../entities/field.entity';
import { ResourceEntity } from '../entities/resource.entity';
import { OutboxEntity } from '../entities/outbox.entity';
import { ProcessingRequestEntity } from '../entities/processing-request.entity';
import { processingRequestsOf } from '../processing/processing-requests';

@Injectable()
export class ResourcesRepository {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  findById(kbid: string, rid: string, manager?: EntityManager): Promise<ResourceEntity | null> {
    if (manager) return manager.findOneBy(ResourceEntity, { kbid, id: rid });
    return this.readOne('id', kbid, rid);
  }

  findBySlug(kbid: string, slug: string, manager?: EntityManager): Promise<ResourceEntity | null> {
    if (manager) return manager.findOneBy(ResourceEntity, { kbid, slug });
    return this.readOne('slug', kbid, slug);
  }

  private reader?: { byId: string; bySlug: string; columns: { db: string; prop: keyof ResourceEntity; from?: (v: unknown) => unknown }[] };

  /**
   * A resource read outside a transaction: the busiest statement of the service (every GET of a
   * resource). TypeORM's findOneBy builds the query and hydrates the row anew on every call,
   * ~100 µs of the request thread; this reads the same selectable columns with a statement built
   * once from the entity's metadata and hydrates them the way TypeORM does (column transformers
   * applied, values the driver already parsed kept). int spec: equal to findOneBy's entity.
   */
  private async readOne(by: 'id' | 'slug', kbid: string, value: string): Promise<ResourceEntity | null> {
    const reader = (this.reader ??= this.buildReader());
    const rows: Record<string, unknown>[] = await this.ds.query(by === 'id' ? reader.byId : reader.bySlug, [kbid, value]);
    const row = rows[0];
    if (!row) return null;
    const fields: Record<string, unknown> = {};
    for (const c of reader.columns) {
      const v = row[c.db];
      if (v !== undefined) fields[c.prop] = c.from ? c.from(v) : v;
    }
    return Object.assign(new ResourceEntity(), fields);
  }

  private buildReader(): NonNullable<ResourcesRepository['reader']> {
    const meta = this.ds.getMetadata(ResourceEntity);
    const columns = meta.columns
      .filter((c) => c.isSelect)
      .map((c) => {
        const transformer = Array.isArray(c.transformer) ? undefined : c.transformer;
        return {
          db: c.databaseName,
          prop: c.propertyName as keyof ResourceEntity,
          ...(transformer ? { from: (v: unknown) => transformer.from(v) as unknown } : {}),
        };
      });
    const list = columns.map((c) => `"${c.db}"`).join(', ');
    const table = `"${meta.schema}"."${meta.tableName}"`;
    return {
      columns,
      byId: `SELECT ${list} FROM ${table} WHERE kbid = $1 AND id = $2 LIMIT 1`,
      bySlug: `SELECT ${list} FROM ${table} WHERE kbid = $1 AND slug = $2 LIMIT 1`,
    };
  }

  /** Locks the row for the rest of the transaction so concurrent writers take turns. */
  lockById(manager: EntityManager, kbid: string, rid: string): Promise<ResourceEntity | null> {
    return manager
      .getRepository(ResourceEntity)
      .createQueryBuilder('r')
      .setLock('pessimistic_write')
      .where('r.kbid = :kbid AND r.id = :rid', { kbid, rid })
      .getOne();
  }

  /** Finds a resource by id or slug and locks its row for the rest of the transaction. */
  async lockByRef(m: EntityManager, ref: ResourceRef): Promise<ResourceEntity> {
    const found = ref.rid ? await this.findById(ref.kbid, ref.rid, m) : ref.slug ? await this.findBySlug(ref.kbid, ref.slug, m) : null;
    const locked = found ? await this.lockById(m, ref.kbid, found.id) : null;
    if (!locked) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    return locked;
  }

  /**
   * The next write sequence number. Inside a transaction it is taken on the transaction's
   * connection; outside, concurrent callers share one statement (see Coalescer), earlier callers
   * getting the smaller numbers.
   */
  async nextSeqid(manager?: EntityManager): Promise<number> {
    if (!manager) return this.seqids.submit(undefined);
    const rows: { seqid: string }[] = await manager.query(`SELECT nextval('content.seqid_seq') AS seqid`);
    return Number(rows[0]?.seqid);
  }

  private readonly seqids = new Coalescer<void, number>(async (callers) => {
    const rows: { seqid: string }[] = await this.ds.query(`SELECT nextval('content.seqid_seq') AS seqid FROM generate_series(1, $1::int)`, [
      callers.length,
    ]);
    return rows.map((r) => Number(r.seqid)).sort((a, b) => a - b);
  });

  fieldsOf(rid: string, manager?: EntityManager): Promise<FieldEntity[]> {
    return (manager ?? this.ds.manager).find(FieldEntity, { where: { rid }, order: { fieldType: 'ASC', fieldId: 'ASC' } });
  }

  findField(rid: string, fieldType: ContentFieldType, fieldId: string, manager?: EntityManager): Promise<FieldEntity | null> {
    return (manager ?? this.ds.manager).findOneBy(FieldEntity, { rid, fieldType, fieldId });
  }

  async insertResource(manager: EntityManager, resource: ResourceEntity): Promise<void> {
    await manager.insert(ResourceEntity, asRow(resource));
  }

  /** A new resource with its fields, outbox rows and processing status records, in one statement (atomic without a transaction). */
  async insertNew(resource: ResourceEntity, fields: FieldEntity[], outbox: OutboxEntity[]): Promise<void> {
    const { sql, params } = insertStatement(this.ds, [
      { target: ResourceEntity, rows: [resource] },
      { target: FieldEntity, rows: fields },
      { target: OutboxEntity, rows: outbox },
      { target: ProcessingRequestEntity, rows: processingRequestsOf(outbox) },
    ] as InsertPart[]);
    await this.ds.query(sql, params);
  }

  async updateResource(manager: EntityManager, rid: string, patch: Partial<ResourceEntity>): Promise<void> {
    await manager.update(ResourceEntity, { id: rid }, asRow(patch));
  }

  async upsertFields(manager: EntityManager, fields: FieldEntity[]): Promise<void> {
    if (fields.length === 0) return;
    await manager.upsert(FieldEntity, fields.map(asRow), ['rid', 'fieldType', 'fieldId']);
  }

  async updateField(
    manager: EntityManager,
    field: Pick<FieldEntity, 'rid' | 'fieldType' | 'fieldId'>,
    patch: Partial<FieldEntity>,
  ): Promise<void> {
    await manager.update(FieldEntity, { rid: field.rid, fieldType: field.fieldType, fieldId: field.fieldId }, asRow(patch));
  }

  async deleteResource(manager: EntityManager, rid: string): Promise<void> {
    await manager.delete(ResourceEntity, { id: rid });
  }

  async page(kbid: string, page: number, size: number, showHidden: boolean): Promise<{ rows: ResourceEntity[]; more: boolean }> {
    const qb = this.ds.getRepository(ResourceEntity).createQueryBuilder('r').where('r.kbid = :kbid', { kbid });
    if (!showHidden) qb.andWhere('r.hidden = false');
    const rows = await qb
      .orderBy('r.created_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .offset(page * size)
      .limit(size + 1)
      .getMany();
    return { rows: rows.slice(0, size), more: rows.length > size };
  }

  async fieldsOfMany(rids: string[]): Promise<FieldEntity[]> {
    if (rids.length === 0) return [];
    return this.ds.getRepository(FieldEntity).createQueryBuilder('f').where('f.rid IN (:...rids)', { rids }).getMany();
  }

  count(kbid: string): Promise<number> {
    return this.ds.getRepository(ResourceEntity).countBy({ kbid });
  }

  /**
   * What a KB holds, each part by its kbid index. The index size adds the stored size of the KB's
   * paragraph, posting and vector rows (not PostgreSQL's own index pages, which are shared by all KBs).
   */
  async counters(kbid: string): Promise<KbCountersDto> {
    const rows = (await this.ds.query(
      `SELECT (SELECT count(*) FROM content.resources WHERE kbid = $1) AS resources,
              (SELECT count(*) FROM content.fields WHERE kbid = $1) AS fields,
              (SELECT count(*) FROM content.search_paragraphs WHERE kbid = $1) AS paragraphs,
              (SELECT count(DISTINCT paragraph) FROM content.search_vectors WHERE kbid = $1) AS sentences,
              (SELECT coalesce(sum(pg_column_size(p.*)), 0) FROM content.search_paragraphs p WHERE p.kbid = $1)
              + (SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM content.search_postings t WHERE t.kbid = $1)
              + (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM content.search_vectors v WHERE v.kbid = $1) AS index_size`,
      [kbid],
    )) as Record<'resources' | 'fields' | 'paragraphs' | 'sentences' | 'index_size', string | number>[];
    const row = rows[0];
    const n = (v: string | number | undefined) => Number(v ?? 0);
    return {
      resources: n(row?.resources),
      paragraphs: n(row?.paragraphs),
      fields: n(row?.fields),
      sentences: n(row?.sentences),
      shards: null,
      index_size: n(row?.index_size),
    };
  }

  /** Ids of a KB's resources, a batch at a time (for KB deletion). */
  async idsOfKb(kbid: string, limit: number): Promise<string[]> {
    const rows = await this.ds.getRepository(ResourceEntity).find({ where: { kbid }, select: { id: true }, take: limit });
    return rows.map((r) => r.id);
  }
}
