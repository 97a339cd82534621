import type { DataSource } from 'typeorm';
import { applyChanges, type KbChanges } from './apply-changes';
import type { KbMemoryIndex } from './kb-memory-index';

/** What reading a KB's index needs (SearchMemoryService's database and limits). */
export interface IndexReads {
  ds: DataSource;
  budgetBytes: number;
  maxParagraphs: number;
  /** True once the service is closing: a read in progress stops. */
  closed(): boolean;
}

/** Paragraph ids read per statement while building (each statement a few ms, so queries interleave). */
export const CHUNK = 2_000;
/** What the full read and updates read of each paragraph (`pid`: ORDER BY id must not sort the text). */
export const PARAGRAPH_COLUMNS = `id::text AS pid, hidden, array_to_json(groups)::text AS groups, array_to_json(tags)::text AS tags, field, language, rid::text AS rid, (extract(epoch FROM created_at) * 1000000)::float8 AS created`;
/** A paragraph's postings, grouped by paragraph: its length and each term with its tf. */
export const POSTINGS_COLUMNS = `paragraph::text AS id, min(length) AS length, array_to_json(array_agg(term))::text AS terms, array_to_json(array_agg(tf))::text AS tf`;
/**
 * Vectors in pgvector's binary form (vector_send: int16 dimensions, int16 unused, then big-endian
 * float4s): the stored float32 values exactly, without printing and parsing text.
 */
export const VECTOR_COLUMNS = `paragraph::text AS id, vectorset, vector_send(vector) AS v`;

/** A query on one connection (the data source's, or a transaction's). */
export type RowQuery = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** A KB's index statistics as the full read and the change-log read both start from; null without an index. */
export async function readStats(
  q: RowQuery,
  kbid: string,
): Promise<{ generation: string; paragraphs: number; totalLength: number } | null> {
  const row = (
    await q(
      `SELECT generation::text AS generation, paragraphs::float8 AS paragraphs, total_length::float8 AS total_length FROM content.search_stats WHERE kbid = $1`,
      [kbid],
    )
  )[0];
  return row
    ? { generation: row['generation'] as string, paragraphs: row['paragraphs'] as number, totalLength: row['total_length'] as number }
    : null;
}

/** Links of the change log an update follows at most; a longer way is a full read. */
export const MAX_LINKS = 5_000;
/** Paragraphs an update touches at most: this many, or a quarter of the KB if more. */
export const MAX_TOUCHED = 5_000;

/**
 * The KB's changes since `base` was read, from the change log (migration 1764800000000), applied
 * to it: one snapshot (REPEATABLE READ) reads the generation, the chain of changes from `base`'s
 * generation to it, and the paragraphs, postings, vectors and term statistics they touched as
 * they are now. 'full' when the chain is broken (a generation set without a change row, or one
 * deleted as too old) or too long to be worth it; 'gone' without an index.
 */
export async function readChanges(reads: IndexReads, kbid: string, base: KbMemoryIndex): Promise<KbMemoryIndex | 'full' | 'gone'> {
  const changes = await reads.ds.transaction('REPEATABLE READ', async (m): Promise<KbChanges | 'same' | 'full' | 'gone'> => {
    const q: RowQuery = (sql, params) => m.query(sql, params) as Promise<Record<string, unknown>[]>;
    const stats = await readStats(q, kbid);
    if (!stats) return 'gone';
    const generation = stats.generation;
    if (generation === base.generation) return 'same';
    if (stats.paragraphs > reads.maxParagraphs) return 'full';
    const chain = await q(
      `WITH RECURSIVE chain AS (
         SELECT generation, paragraphs, terms, 1 AS n FROM content.search_changes WHERE kbid = $1 AND prev = $2::bigint
         UNION ALL
         SELECT c.generation, c.paragraphs, c.terms, chain.n + 1 FROM chain JOIN content.search_changes c ON c.kbid = $1 AND c.prev = chain.generation WHERE chain.n <= ${MAX_LINKS}
       )
       SELECT (SELECT max(n) FROM chain) AS links,
              (SELECT generation::text FROM chain ORDER BY n DESC LIMIT 1) AS last,
              (SELECT coalesce(array_to_json(array_agg(DISTINCT x::text)), '[]')::text FROM chain, unnest(chain.paragraphs) AS x) AS paragraphs,
              (SELECT coalesce(array_to_json(array_agg(DISTINCT y)), '[]')::text FROM chain, unnest(chain.terms) AS y) AS terms`,
      [kbid, base.generation],
    );
    const c = chain[0];
    if (!c || c['last'] !== generation || Number(c['links']) > MAX_LINKS) return 'full';
    const touched = JSON.parse(c['paragraphs'] as string) as string[];
    const terms = JSON.parse(c['terms'] as string) as string[];
    if (touched.length > Math.max(MAX_TOUCHED, base.size / 4)) return 'full';
    const rows: KbChanges['rows'] = [];
    const postings: KbChanges['postings'] = new Map();
    const vectors: KbChanges['vectors'] = [];
    for (let i = 0; i < touched.length; i += CHUNK) {
      const ids = touched.slice(i, i + CHUNK);
      for (const r of await q(
        `SELECT ${PARAGRAPH_COLUMNS}
           FROM content.search_paragraphs WHERE kbid = $1 AND id = ANY($2::bigint[])`,
        [kbid, ids],
      )) {
        rows.push({
          id: r['pid'] as string,
          hidden: r['hidden'] as boolean,
          groups: r['groups'] as string,
          tags: r['tags'] as string,
          field: r['field'] as string,
          language: r['language'] as string,
          rid: r['rid'] as string,
          created: r['created'] as number,
        });
      }
      for (const r of await q(
        `SELECT ${POSTINGS_COLUMNS}
           FROM content.search_postings WHERE kbid = $1 AND paragraph = ANY($2::bigint[]) GROUP BY paragraph`,
        [kbid, ids],
      )) {
        postings.set(r['id'] as string, {
          length: r['length'] as number,
          terms: JSON.parse(r['terms'] as string) as string[],
          tf: JSON.parse(r['tf'] as string) as number[],
        });
      }
      for (const r of await q(`SELECT ${VECTOR_COLUMNS} FROM content.search_vectors WHERE kbid = $1 AND paragraph = ANY($2::bigint[])`, [
        kbid,
        ids,
      ])) {
        vectors.push({ id: r['id'] as string, vectorset: r['vectorset'] as string, v: r['v'] as Uint8Array });
      }
    }
    // ids ascending, as the full read appends them
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    const df = new Map<string, number>(terms.map((t) => [t, 0]));
    for (let i = 0; i < terms.length; i += CHUNK) {
      for (const r of await q(`SELECT term, df FROM content.search_terms WHERE kbid = $1 AND term = ANY($2::text[])`, [
        kbid,
        terms.slice(i, i + CHUNK),
      ]))
        df.set(r['term'] as string, r['df'] as number);
    }
    return {
      generation,
      paragraphs: stats.paragraphs,
      totalLength: stats.totalLength,
      touched,
      rows,
      postings,
      vectors,
      df,
    };
  });
  if (changes === 'same') return base;
  if (changes === 'full' || changes === 'gone') return changes;
  return applyChanges(base, changes);
}
