import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { FIELD_TYPE_LETTER, type ContentFieldType, type ExtractedFieldData } from '@kb/contracts';
import type { FieldEntity } from '../../entities/field.entity';
import type { ResourceEntity } from '../../entities/resource.entity';
import { CONTENT_OPTIONS, keepsHnswIndex, type ContentOptions } from '../../content.tokens';
import { analyze } from '../analysis';
import { RESOURCE_LEVEL, fieldRelations, replaceRelations, resourceRelations } from './relations-index';
import { SearchMaintenanceService } from './search-maintenance.service';
import { ensureHnsw } from './hnsw';
import { IndexBatch, insertParagraphs, type ParagraphInsert } from './paragraph-insert';
import { countTerms, fieldRows, vectorSetsOf, type ParagraphRow, type RowVectors } from './paragraph-rows';
import { resourceTags } from './tags';

export { hnswIndexName } from './hnsw';
export { IndexBatch } from './paragraph-insert';

const TITLE_FIELD = 'a/title';

/**
 * Keeps the search index (docs/decisions/0011) equal to the stored resources. Every method runs
 * inside the caller's transaction, so the index changes atomically with the data it describes:
 * a processing result and its paragraphs land together, a deleted field's paragraphs go with it.
 */
@Injectable()
export class SearchIndexerService {
  private readonly hnsw: boolean;

  constructor(
    @Optional() private readonly maintenance?: SearchMaintenanceService,
    @Optional() @Inject(CONTENT_OPTIONS) options?: Pick<ContentOptions, 'vectorIndex'>,
  ) {
    this.hnsw = keepsHnswIndex(options);
  }

  /** Replaces the paragraphs (and their postings and vectors) of one processed field. */
  async indexField(
    m: EntityManager,
    resource: ResourceEntity,
    field: Pick<FieldEntity, 'fieldType' | 'fieldId'>,
    extracted: ExtractedFieldData,
    batch?: IndexBatch,
  ): Promise<void> {
    const name = `${FIELD_TYPE_LETTER[field.fieldType]}/${field.fieldId}`;
    if (batch?.needsFlush(resource, name)) await this.flush(m, batch);
    await this.unindex(m, resource.kbid, resource.id, [name]);
    const rows = fieldRows(resource, field.fieldType, field.fieldId, extracted);
    await this.insert(m, resource, rows, vectorSetsOf(extracted, rows), batch);
    await replaceRelations(
      m,
      resource.kbid,
      resource.id,
      `${FIELD_TYPE_LETTER[field.fieldType]}/${field.fieldId}`,
      fieldRelations(resource.id, extracted),
    );
  }

  /** Drops the paragraphs of one field (the field was deleted). */
  async unindexField(m: EntityManager, kbid: string, rid: string, fieldType: ContentFieldType, fieldId: string): Promise<void> {
    await this.unindex(m, kbid, rid, [`${FIELD_TYPE_LETTER[fieldType]}/${fieldId}`]);
    await replaceRelations(m, kbid, rid, `${FIELD_TYPE_LETTER[fieldType]}/${fieldId}`, []);
  }

  /** Drops every paragraph of a resource (before the resource row goes). */
  async unindexResource(m: EntityManager, kbid: string, rid: string): Promise<void> {
    await this.unindex(m, kbid, rid, null);
    await m.query(`DELETE FROM content.search_relations WHERE rid = $1`, [rid]);
  }

  /**
   * Rebuilds a resource's index rows from what is stored (`content.fields.extracted`, vectors
   * included): after `reindex`, or to repair an index. Fields without a processing result keep
   * nothing indexed.
   */
  async reindexResource(m: EntityManager, resource: ResourceEntity, fields: FieldEntity[]): Promise<void> {
    await this.unindex(m, resource.kbid, resource.id, null);
    await m.query(`DELETE FROM content.search_relations WHERE rid = $1`, [resource.id]);
    for (const f of fields) {
      // A field's stored processing result (`vectors` absent on results stored before vectors were kept).
      const extracted = f.extracted as (Omit<ExtractedFieldData, 'vectors'> & Partial<Pick<ExtractedFieldData, 'vectors'>>) | null;
      if (extracted && typeof extracted === 'object' && extracted.text) {
        await this.indexField(m, resource, f, {
          ...extracted,
          vectors: extracted.vectors ?? { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
        });
      }
    }
    await this.syncResource(m, resource);
  }

  /** Drops a whole knowledge box's index. */
  async dropKb(m: EntityManager, kbid: string): Promise<void> {
    await m.query(`DELETE FROM content.search_postings WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_vectors WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_paragraphs WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_terms WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_stats WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_changes WHERE kbid = $1`, [kbid]);
    await m.query(`DELETE FROM content.search_relations WHERE kbid = $1`, [kbid]);
  }

  /**
   * Brings the resource-level parts of the index up to date after any write: the resource's own
   * tags (labels, status, origin, languages, hidden), its security groups and hidden flag on every
   * paragraph, and the title paragraph (`a/title`).
   */
  async syncResource(m: EntityManager, resource: ResourceEntity, o: { fresh?: boolean; batch?: IndexBatch } = {}): Promise<void> {
    if (o.batch?.needsFlush(resource, TITLE_FIELD)) await this.flush(m, o.batch);
    const rtags = resourceTags(resource);
    const groups = [...new Set(resource.accessGroups ?? [])].sort();
    // The resource's own graph edges (user relations, ABOUT its labels); a fresh resource has none yet.
    const edges = resourceRelations(resource);
    if (!o.fresh || edges.length) await replaceRelations(m, resource.kbid, resource.id, RESOURCE_LEVEL, edges, { fresh: o.fresh });
    // A fresh row was inserted with its tags (see ResourcesService.create): updating it again would
    // write a second version of the row and of every index on it.
    if (!o.fresh)
      await m.query(`UPDATE content.resources SET search_tags = $2 WHERE id = $1 AND search_tags IS DISTINCT FROM $2::text[]`, [
        resource.id,
        rtags,
      ]);
    const title = resource.title.trim();
    // A resource created in this transaction has nothing indexed yet: only its title can be.
    if (!o.fresh) {
      await m.query(
        `UPDATE content.search_paragraphs SET tags = $2::text[] || ptags, groups = $3, hidden = $4
          WHERE rid = $1 AND (tags IS DISTINCT FROM $2::text[] || ptags OR groups IS DISTINCT FROM $3::text[] OR hidden IS DISTINCT FROM $4)`,
        [resource.id, rtags, groups, resource.hidden],
      );
      const existing = (await m.query(`SELECT text FROM content.search_paragraphs WHERE rid = $1 AND field = $2`, [
        resource.id,
        TITLE_FIELD,
      ])) as { text: string }[];
      if (existing.length === 1 && existing[0]?.text === resource.title) return;
      if (existing.length === 0 && !title) return;
      await this.unindex(m, resource.kbid, resource.id, [TITLE_FIELD]);
    }
    if (!title) return;
    const language = typeof resource.metadata['language'] === 'string' ? (resource.metadata['language'] as string) : '';
    const terms = analyze(resource.title, language || undefined);
    const row: ParagraphRow = {
      field: TITLE_FIELD,
      split: '',
      paragraphId: `${resource.id}/${TITLE_FIELD}/0-${resource.title.length}`,
      start: 0,
      end: resource.title.length,
      idx: 0,
      page: null,
      startSeconds: null,
      endSeconds: null,
      text: resource.title,
      kind: 'TITLE',
      language,
      labels: rtags.filter((t) => t.startsWith('/l/')),
      ptags: ['/k/TITLE'],
      terms: countTerms(terms),
      length: terms.length,
    };
    await this.insert(m, resource, [row], [], o.batch);
  }
  /**
   * Inserts paragraphs with their postings, term and length statistics and vectors in ONE statement
   * (data-modifying CTEs): on the embedded database every statement of a write transaction is a
   * round trip that holds up the other writers, so indexing costs one, not five. With a batch the
   * insert waits for `flush`, and shares its statement with the batch's other writes.
   */
  private async insert(
    m: EntityManager,
    resource: ResourceEntity,
    rows: ParagraphRow[],
    sets: RowVectors[],
    batch?: IndexBatch,
  ): Promise<void> {
    if (rows.length === 0) return;
    this.maintenance?.noteChange(rows.length);
    if (batch) batch.add({ resource, rows, sets });
    else await this.insertNow(m, [{ resource, rows, sets }]);
  }

  /** Makes the paragraph inserts a batch holds, in one statement. */
  async flush(m: EntityManager, batch: IndexBatch): Promise<void> {
    await this.insertNow(m, batch.take());
  }

  private async insertNow(m: EntityManager, inserts: ParagraphInsert[]): Promise<void> {
    const written = await insertParagraphs(m, inserts);
    if (this.hnsw) for (const h of written) await ensureHnsw(m, h.vectorset, h.dimension, h.similarity);
  }

  /**
   * Removes paragraphs with their postings (term statistics decremented first) and vectors.
   * `fields` null → every paragraph of the resource.
   */
  private async unindex(m: EntityManager, kbid: string, rid: string, fields: string[] | null): Promise<void> {
    const where = fields ? `rid = $1 AND field = ANY($2::text[])` : `rid = $1`;
    const params: unknown[] = fields ? [rid, fields] : [rid];
    const gone = (await m.query(
      `SELECT count(*)::int AS n, coalesce(sum(length), 0)::bigint AS len FROM content.search_paragraphs WHERE ${where}`,
      params,
    )) as { n: number; len: string }[];
    const n = gone[0]?.n ?? 0;
    if (n === 0) return;
    this.maintenance?.noteChange(n);
    const pwhere = fields ? `p.rid = $1 AND p.field = ANY($2::text[])` : `p.rid = $1`;
    const terms = (await m.query(
      `SELECT po.term, count(*)::int AS n FROM content.search_postings po JOIN content.search_paragraphs p ON p.id = po.paragraph
        WHERE po.kbid = $${params.length + 1} AND ${pwhere} GROUP BY po.term`,
      [...params, kbid],
    )) as { term: string; n: number }[];
    await this.addDf(m, kbid, new Map(terms.map((t) => [t.term, -t.n])));
    await m.query(`DELETE FROM content.search_paragraphs WHERE ${where}`, params);
    await m.query(
      `UPDATE content.search_stats SET paragraphs = greatest(paragraphs - $2, 0), total_length = greatest(total_length - $3, 0) WHERE kbid = $1`,
      [kbid, n, Number(gone[0]?.len ?? 0)],
    );
  }

  /** Adds (or, negative, removes) document frequencies; rows are touched in term order so concurrent writers never deadlock. */
  private async addDf(m: EntityManager, kbid: string, df: Map<string, number>): Promise<void> {
    if (df.size === 0) return;
    const entries = [...df.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    await m.query(
      `INSERT INTO content.search_terms AS t (kbid, term, df) SELECT $1, x.term, x.n FROM unnest($2::text[], $3::int[]) AS x(term, n) ORDER BY x.term
       ON CONFLICT (kbid, term) DO UPDATE SET df = t.df + EXCLUDED.df`,
      [kbid, entries.map((e) => e[0]), entries.map((e) => e[1])],
    );
    if (entries.some((e) => e[1] < 0)) {
      await m.query(`DELETE FROM content.search_terms WHERE kbid = $1 AND term = ANY($2::text[]) AND df <= 0`, [
        kbid,
        entries.filter((e) => e[1] < 0).map((e) => e[0]),
      ]);
    }
  }
}
