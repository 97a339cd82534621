import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { FIELD_TYPE_LETTER, type ContentFieldType, type ExtractedFieldData } from '@kb/contracts';
import type { FieldEntity } from '../../entities/field.entity';
import type { ResourceEntity } from '../../entities/resource.entity';
import { CONTENT_OPTIONS, keepsHnswIndex, type ContentOptions } from '../../content.tokens';
import { analyze } from '../analysis';
import { isSafeVectorset } from '../search-ids';
import { SqlParams } from '../query/sql';
import { RESOURCE_LEVEL, fieldRelations, replaceRelations, resourceRelations } from './relations-index';
import { SearchMaintenanceService } from './search-maintenance.service';
import { ensureHnsw } from './hnsw';
import { countTerms, fieldRows, vectorSetsOf, type ParagraphRow, type RowVectors } from './paragraph-rows';
import { resourceTags } from './tags';

export { hnswIndexName } from './hnsw';

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
  ): Promise<void> {
    await this.unindex(m, resource.kbid, resource.id, [`${FIELD_TYPE_LETTER[field.fieldType]}/${field.fieldId}`]);
    const rows = fieldRows(resource, field.fieldType, field.fieldId, extracted);
    await this.insert(m, resource, rows, vectorSetsOf(extracted, rows));
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
  async syncResource(m: EntityManager, resource: ResourceEntity, o: { fresh?: boolean } = {}): Promise<void> {
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
    await this.insert(m, resource, [row], []);
  }
  /**
   * Inserts paragraphs with their postings, term and length statistics and vectors in ONE statement
   * (data-modifying CTEs): on the embedded database every statement of a write transaction is a
   * round trip that holds up the other writers, so indexing costs one, not five.
   */
  private async insert(m: EntityManager, resource: ResourceEntity, rows: ParagraphRow[], sets: RowVectors[]): Promise<void> {
    if (rows.length === 0) return;
    this.maintenance?.noteChange(rows.length);
    const p = new SqlParams();
    const kb = p.add(resource.kbid);
    const postPids: string[] = [];
    const postTerms: string[] = [];
    const postTf: number[] = [];
    const postLength: number[] = [];
    const df = new Map<string, number>();
    let totalLength = 0;
    for (const r of rows) {
      totalLength += r.length;
      for (const [term, tf] of r.terms) {
        postPids.push(r.paragraphId);
        postTerms.push(term);
        postTf.push(tf);
        postLength.push(r.length);
        df.set(term, (df.get(term) ?? 0) + 1);
      }
    }
    const dfEntries = [...df.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    const languages = [...new Set(rows.map((r) => r.language).filter(Boolean))];
    const col = <T>(f: (r: ParagraphRow) => T) => rows.map(f);
    let sql = `
      WITH ins AS (
        INSERT INTO content.search_paragraphs
          (kbid, rid, field, split, paragraph_id, start_offset, end_offset, idx, page, start_seconds, end_seconds, text, kind, language, length, labels, ptags, tags, groups, hidden, created_at)
        SELECT ${kb}, ${p.add(resource.id)}, x.field, x.split, x.pid, x.s, x.e, x.idx, x.page, x.ss, x.es, x.text, x.kind, x.lang, x.len,
               ARRAY(SELECT json_array_elements_text(x.labels::json)), ARRAY(SELECT json_array_elements_text(x.ptags::json)),
               ${p.add(resourceTags(resource))}::text[] || ARRAY(SELECT json_array_elements_text(x.ptags::json)),
               ${p.add([...new Set(resource.accessGroups ?? [])].sort())}::text[], ${p.add(resource.hidden)}, ${p.add(resource.createdAt)}
          FROM unnest(${p.add(col((r) => r.field))}::text[], ${p.add(col((r) => r.split))}::text[], ${p.add(col((r) => r.paragraphId))}::text[],
                      ${p.add(col((r) => r.start))}::int[], ${p.add(col((r) => r.end))}::int[], ${p.add(col((r) => r.idx))}::int[], ${p.add(col((r) => r.page))}::int[],
                      ${p.add(col((r) => r.startSeconds))}::float8[], ${p.add(col((r) => r.endSeconds))}::float8[], ${p.add(col((r) => r.text))}::text[], ${p.add(col((r) => r.kind))}::text[], ${p.add(col((r) => r.language))}::text[], ${p.add(col((r) => r.length))}::int[],
                      ${p.add(col((r) => JSON.stringify(r.labels)))}::text[], ${p.add(col((r) => JSON.stringify(r.ptags)))}::text[])
               AS x(field, split, pid, s, e, idx, page, ss, es, text, kind, lang, len, labels, ptags)
        RETURNING id, paragraph_id
      ),
      post AS (
        INSERT INTO content.search_postings (kbid, term, paragraph, tf, length)
        SELECT ${kb}, x.t, ins.id, x.f, x.l FROM unnest(${p.add(postPids)}::text[], ${p.add(postTerms)}::text[], ${p.add(postTf)}::int[], ${p.add(postLength)}::int[]) AS x(pid, t, f, l)
          JOIN ins ON ins.paragraph_id = x.pid
      ),
      terms AS (
        -- rows are touched in term order, so concurrent writers never deadlock
        INSERT INTO content.search_terms AS t (kbid, term, df)
        SELECT ${kb}, x.term, x.n FROM unnest(${p.add(dfEntries.map((e) => e[0]))}::text[], ${p.add(dfEntries.map((e) => e[1]))}::int[]) AS x(term, n) ORDER BY x.term
        ON CONFLICT (kbid, term) DO UPDATE SET df = t.df + EXCLUDED.df
      ),
      stats AS (
        INSERT INTO content.search_stats AS s (kbid, paragraphs, total_length, languages) VALUES (${kb}, ${p.add(rows.length)}, ${p.add(totalLength)}, ${p.add(languages)}::text[])
        ON CONFLICT (kbid) DO UPDATE SET paragraphs = s.paragraphs + EXCLUDED.paragraphs, total_length = s.total_length + EXCLUDED.total_length,
          languages = CASE WHEN EXCLUDED.languages <@ s.languages THEN s.languages ELSE ARRAY(SELECT DISTINCT unnest(s.languages || EXCLUDED.languages) ORDER BY 1) END
      )`;
    // One CTE per vectorset (semantic model) the field was vectorised with.
    const hnsw: { vectorset: string; dimension: number; similarity: 'COSINE' | 'DOT' }[] = [];
    for (const set of sets) {
      if (!isSafeVectorset(set.vectorset)) continue;
      const withVectors = rows.flatMap((r) => {
        const v = set.byParagraph.get(r.paragraphId);
        return v && v.length > 0 ? [{ pid: r.paragraphId, v }] : [];
      });
      const dimension = withVectors[0]?.v.length;
      if (!dimension) continue;
      const same = withVectors.filter((x) => x.v.length === dimension);
      sql += `,
      vec${hnsw.length} AS (
        INSERT INTO content.search_vectors (paragraph, vectorset, kbid, dimension, vector)
        SELECT ins.id, ${p.add(set.vectorset)}, ${kb}, ${p.add(dimension)}, x.v::vector
          FROM unnest(${p.add(same.map((x) => x.pid))}::text[], ${p.add(same.map((x) => `[${x.v.join(',')}]`))}::text[]) AS x(pid, v)
          JOIN ins ON ins.paragraph_id = x.pid
      )`;
      hnsw.push({ vectorset: set.vectorset, dimension, similarity: set.similarity });
    }
    sql += `
      SELECT count(*)::int AS n FROM ins`;
    await m.query(sql, p.values);
    if (this.hnsw) for (const h of hnsw) await ensureHnsw(m, h.vectorset, h.dimension, h.similarity);
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
