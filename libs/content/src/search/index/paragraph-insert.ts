import type { EntityManager } from 'typeorm';
import type { ResourceEntity } from '../../entities/resource.entity';
import { isSafeVectorset } from '../search-ids';
import { SqlParams } from '../query/sql';
import type { ParagraphRow, RowVectors } from './paragraph-rows';
import { resourceTags } from './tags';

/** Paragraphs of one resource to insert, with their vectors (one entry per vectorset). */
export interface ParagraphInsert {
  resource: ResourceEntity;
  rows: ParagraphRow[];
  sets: RowVectors[];
}

/** A vectorset's index the inserted vectors need (created when missing, see ensureHnsw). */
export interface InsertedVectorset {
  vectorset: string;
  dimension: number;
  similarity: 'COSINE' | 'DOT';
}

/**
 * Inserts paragraphs of any number of resources (of any KBs) with their postings, term and length
 * statistics and vectors in ONE statement (data-modifying CTEs). Each statement that writes the
 * paragraphs pays a fixed cost besides its rows (the generation triggers, the statistics rows, the
 * plan of a large statement): a batch of processing results shares it (see IndexBatch).
 * Term and statistics rows are touched in (kbid, term) and kbid order, so concurrent writers never deadlock.
 * Returns the vectorsets written, for their HNSW index.
 */
export async function insertParagraphs(m: EntityManager, inserts: ParagraphInsert[]): Promise<InsertedVectorset[]> {
  const entries = inserts.filter((e) => e.rows.length > 0);
  if (entries.length === 0) return [];
  const p = new SqlParams();
  const rows = entries.flatMap((e) => e.rows.map((r) => ({ e, r })));
  const col = <T>(f: (x: { e: ParagraphInsert; r: ParagraphRow }) => T) => p.add(rows.map(f));
  const post = {
    kb: [] as string[],
    rid: [] as string[],
    pid: [] as string[],
    term: [] as string[],
    tf: [] as number[],
    len: [] as number[],
  };
  const df = new Map<string, { kb: string; term: string; n: number }>();
  const stats = new Map<string, { paragraphs: number; length: number; languages: Set<string> }>();
  for (const { e, r } of rows) {
    const kb = e.resource.kbid;
    const s = stats.get(kb) ?? { paragraphs: 0, length: 0, languages: new Set<string>() };
    s.paragraphs += 1;
    s.length += r.length;
    if (r.language) s.languages.add(r.language);
    stats.set(kb, s);
    for (const [term, tf] of r.terms) {
      post.kb.push(kb);
      post.rid.push(e.resource.id);
      post.pid.push(r.paragraphId);
      post.term.push(term);
      post.tf.push(tf);
      post.len.push(r.length);
      const key = `${kb}\u0000${term}`;
      const d = df.get(key) ?? { kb, term, n: 0 };
      d.n += 1;
      df.set(key, d);
    }
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  const dfRows = [...df.values()].sort((a, b) => cmp(a.kb, b.kb) || cmp(a.term, b.term));
  const statRows = [...stats.entries()].sort((a, b) => cmp(a[0], b[0]));
  let sql = `
      WITH ins AS (
        INSERT INTO content.search_paragraphs
          (kbid, rid, field, split, paragraph_id, start_offset, end_offset, idx, page, start_seconds, end_seconds, text, kind, language, length, labels, ptags, tags, groups, hidden, created_at)
        SELECT x.kb, x.rid, x.field, x.split, x.pid, x.s, x.e, x.idx, x.page, x.ss, x.es, x.text, x.kind, x.lang, x.len,
               ARRAY(SELECT json_array_elements_text(x.labels::json)), ARRAY(SELECT json_array_elements_text(x.ptags::json)),
               ARRAY(SELECT json_array_elements_text(x.rtags::json)) || ARRAY(SELECT json_array_elements_text(x.ptags::json)),
               ARRAY(SELECT json_array_elements_text(x.groups::json)), x.hidden, x.created
          FROM unnest(${col(({ e }) => e.resource.kbid)}::uuid[], ${col(({ e }) => e.resource.id)}::uuid[],
                      ${col(({ r }) => r.field)}::text[], ${col(({ r }) => r.split)}::text[], ${col(({ r }) => r.paragraphId)}::text[],
                      ${col(({ r }) => r.start)}::int[], ${col(({ r }) => r.end)}::int[], ${col(({ r }) => r.idx)}::int[], ${col(({ r }) => r.page)}::int[],
                      ${col(({ r }) => r.startSeconds)}::float8[], ${col(({ r }) => r.endSeconds)}::float8[], ${col(({ r }) => r.text)}::text[],
                      ${col(({ r }) => r.kind)}::text[], ${col(({ r }) => r.language)}::text[], ${col(({ r }) => r.length)}::int[],
                      ${col(({ r }) => JSON.stringify(r.labels))}::text[], ${col(({ r }) => JSON.stringify(r.ptags))}::text[],
                      ${col(({ e }) => JSON.stringify(resourceTags(e.resource)))}::text[],
                      ${col(({ e }) => JSON.stringify([...new Set(e.resource.accessGroups ?? [])].sort()))}::text[],
                      ${col(({ e }) => e.resource.hidden)}::boolean[], ${col(({ e }) => new Date(e.resource.createdAt).toISOString())}::timestamptz[])
               AS x(kb, rid, field, split, pid, s, e, idx, page, ss, es, text, kind, lang, len, labels, ptags, rtags, groups, hidden, created)
        RETURNING id, kbid, rid, paragraph_id
      ),
      post AS (
        INSERT INTO content.search_postings (kbid, term, paragraph, tf, length)
        SELECT ins.kbid, x.t, ins.id, x.f, x.l
          FROM unnest(${p.add(post.rid)}::uuid[], ${p.add(post.pid)}::text[], ${p.add(post.term)}::text[], ${p.add(post.tf)}::int[], ${p.add(post.len)}::int[]) AS x(rid, pid, t, f, l)
          JOIN ins ON ins.rid = x.rid AND ins.paragraph_id = x.pid
      ),
      terms AS (
        INSERT INTO content.search_terms AS t (kbid, term, df)
        SELECT x.kb, x.term, x.n FROM unnest(${p.add(dfRows.map((d) => d.kb))}::uuid[], ${p.add(dfRows.map((d) => d.term))}::text[], ${p.add(dfRows.map((d) => d.n))}::int[]) AS x(kb, term, n)
         ORDER BY x.kb, x.term
        ON CONFLICT (kbid, term) DO UPDATE SET df = t.df + EXCLUDED.df
      ),
      stats AS (
        INSERT INTO content.search_stats AS s (kbid, paragraphs, total_length, languages)
        SELECT x.kb, x.n, x.len, ARRAY(SELECT json_array_elements_text(x.langs::json) ORDER BY 1)
          FROM unnest(${p.add(statRows.map((s) => s[0]))}::uuid[], ${p.add(statRows.map((s) => s[1].paragraphs))}::int[], ${p.add(statRows.map((s) => s[1].length))}::bigint[],
                      ${p.add(statRows.map((s) => JSON.stringify([...s[1].languages])))}::text[]) AS x(kb, n, len, langs)
         ORDER BY x.kb
        ON CONFLICT (kbid) DO UPDATE SET paragraphs = s.paragraphs + EXCLUDED.paragraphs, total_length = s.total_length + EXCLUDED.total_length,
          languages = CASE WHEN EXCLUDED.languages <@ s.languages THEN s.languages ELSE ARRAY(SELECT DISTINCT unnest(s.languages || EXCLUDED.languages) ORDER BY 1) END
      )`;
  // One CTE per vectorset (semantic model) the paragraphs were vectorised with; a vectorset's
  // vectors of another dimension than its first are left out, as a vector column holds one.
  const written: InsertedVectorset[] = [];
  const byName = new Map<string, { set: RowVectors; items: { rid: string; pid: string; v: number[] }[] }>();
  for (const e of entries) {
    for (const set of e.sets) {
      if (!isSafeVectorset(set.vectorset)) continue;
      const group = byName.get(set.vectorset) ?? { set, items: [] };
      for (const r of e.rows) {
        const v = set.byParagraph.get(r.paragraphId);
        if (v && v.length > 0) group.items.push({ rid: e.resource.id, pid: r.paragraphId, v });
      }
      byName.set(set.vectorset, group);
    }
  }
  for (const [vectorset, { set, items }] of byName) {
    const dimension = items[0]?.v.length;
    if (!dimension) continue;
    const same = items.filter((x) => x.v.length === dimension);
    sql += `,
      vec${written.length} AS (
        INSERT INTO content.search_vectors (paragraph, vectorset, kbid, dimension, vector)
        SELECT ins.id, ${p.add(vectorset)}, ins.kbid, ${p.add(dimension)}, x.v::vector
          FROM unnest(${p.add(same.map((x) => x.rid))}::uuid[], ${p.add(same.map((x) => x.pid))}::text[], ${p.add(same.map((x) => `[${x.v.join(',')}]`))}::text[]) AS x(rid, pid, v)
          JOIN ins ON ins.rid = x.rid AND ins.paragraph_id = x.pid
      )`;
    written.push({ vectorset, dimension, similarity: set.similarity });
  }
  sql += `
      SELECT count(*)::int AS n FROM ins`;
  await m.query(sql, p.values);
  return written;
}

/**
 * The paragraph inserts of several index writes in one transaction, held back and made in one
 * statement (`SearchIndexerService.flush`). Held paragraphs are not in the table yet, so a write
 * that reads or deletes a field's paragraphs while that field's are held, or that brings a resource
 * with other tags than its held paragraphs carry, flushes first (`needsFlush`).
 */
export class IndexBatch {
  private inserts: ParagraphInsert[] = [];
  private readonly held = new Map<string, { resource: ParagraphInsert['resource']; fields: Set<string> }>();

  needsFlush(resource: ParagraphInsert['resource'], field: string): boolean {
    const h = this.held.get(resource.id);
    return h !== undefined && (h.resource !== resource || h.fields.has(field));
  }

  add(insert: ParagraphInsert): void {
    if (insert.rows.length === 0) return;
    this.inserts.push(insert);
    const h = this.held.get(insert.resource.id) ?? { resource: insert.resource, fields: new Set<string>() };
    h.resource = insert.resource;
    for (const r of insert.rows) h.fields.add(r.field);
    this.held.set(insert.resource.id, h);
  }

  take(): ParagraphInsert[] {
    const out = this.inserts;
    this.inserts = [];
    this.held.clear();
    return out;
  }
}
