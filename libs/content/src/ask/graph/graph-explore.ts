import type { EntityManager } from 'typeorm';
import { PARAGRAPH_COLUMNS, type ParagraphRow } from '../../search/find/search.repository';
import { queryNgrams } from '../../search/query/relations';
import { escapeLike, SqlParams } from '../../search/query/sql';

/**
 * Bounds of one graph_beta exploration, whatever the request: an /ask never reads more than
 * `maxEdges` edges, nor spends more than `budgetMs` exploring (the hops reached by then are used).
 */
export const GRAPH_EXPLORATION = {
  maxQueryEntities: 20,
  /** Words of the question tried as entity prefixes (`suggest`). */
  maxSuggestWords: 16,
  /** Edges read from the name index per word and end (`suggest`), before visibility. */
  maxSuggestEdgesPerWord: 200,
  maxWordChars: 64,
  maxEdgesPerHop: 1000,
  maxEdges: 5000,
  /** Entities explored in one hop. */
  maxFrontier: 600,
  budgetMs: 5000,
} as const;

/** The request's scope, as /find's plan holds it: a condition on paragraphs `p` (KB, filters, security groups, hidden). */
export interface GraphScope {
  kbid: string;
  where: string;
  params: SqlParams;
}

/** Which edges the strategy may use. */
export interface EdgeKinds {
  /** Only edges not produced by processing. */
  excludeProcessor: boolean;
  /** Only edges whose paragraph is known (the context is paragraphs). */
  withParagraph: boolean;
}

export interface EdgeRow {
  id: string;
  rid: string;
  source_value: string;
  source_type: string;
  relation: string;
  label: string;
  dest_value: string;
  dest_type: string;
  paragraph: string | null;
  generated: string;
}

const EDGE_COLUMNS =
  'e.id::text AS id, e.rid::text AS rid, e.source_value, e.source_type, e.relation, e.label, e.dest_value, e.dest_type, e.paragraph, e.generated';

/**
 * Edges between two entities (the users' relations, and processing's when allowed), and — when
 * processing's edges are allowed — processing's resource → entity edges (an entity found in a
 * paragraph). An edge is usable only through a paragraph the request may see: its own paragraph
 * when it has one, else one of its resource (of its field, for a field's edge), under the request's
 * scope — so a relation of a resource the caller cannot see (groups, hidden, filters) is never read.
 */
function edgeConditions(scope: GraphScope, params: SqlParams, kinds: EdgeKinds): string {
  const entityToEntity = `(e.source_type = 'entity' AND e.dest_type = 'entity'${kinds.excludeProcessor ? ` AND e.generated <> 'processor'` : ''})`;
  const kind = kinds.excludeProcessor
    ? entityToEntity
    : `(${entityToEntity} OR (e.generated = 'processor' AND e.relation = 'ENTITY' AND e.dest_type = 'entity'))`;
  const visible = `EXISTS (SELECT 1 FROM content.search_paragraphs p
      WHERE p.rid = e.rid AND (CASE WHEN e.paragraph IS NOT NULL THEN p.paragraph_id = e.paragraph ELSE (e.field = '' OR p.field = e.field) END)
        AND ${scope.where})`;
  return `e.kbid = ${params.add(scope.kbid)} AND ${kind}${kinds.withParagraph ? ' AND e.paragraph IS NOT NULL' : ''} AND ${visible}`;
}

/** Entity values (lower-cased) among usable edges whose value is one of `values`. */
async function entityValues(m: EntityManager, scope: GraphScope, kinds: EdgeKinds, values: string[]): Promise<string[]> {
  const params = new SqlParams(scope.params.values);
  const arg = params.add(values);
  const rows = (await m.query(
    `SELECT DISTINCT lower(x.v) AS v FROM content.search_relations e
       CROSS JOIN LATERAL (VALUES (e.source_value, e.source_type), (e.dest_value, e.dest_type)) AS x(v, t)
      WHERE (lower(e.source_value) = ANY(${arg}::text[]) OR lower(e.dest_value) = ANY(${arg}::text[])) AND x.t = 'entity'
        AND lower(x.v) = ANY(${arg}::text[]) AND ${edgeConditions(scope, params, kinds)}
      ORDER BY 1 LIMIT ${params.add(GRAPH_EXPLORATION.maxQueryEntities)}`,
    params.values,
  )) as { v: string }[];
  return rows.map((r) => r.v);
}

/** Above every character a lower-cased name can hold: `[w, w + TOP)` is the range of names starting with `w`. */
const TOP = '\u{10FFFF}';

/** The words of a node name, as the GIN indexes of migration 1765262100000 hold them (the expression must match theirs). */
const RELATION_NAME_WORDS = (col: string) => `regexp_split_to_array(lower(${col}), '[[:space:][:punct:]]+')`;

/**
 * Entity values (lower-cased) among usable edges whose name starts with one of `words` or has one
 * of them as a whole word ("obama" finds "Barack Obama"). Read through the graph's indexes only:
 * the name indexes (`(kbid, lower(source_value))`, `(kbid, lower(dest_value))`, those /graph's node
 * look-ups use) as one range per word and end, and the name-word indexes; each look-up cut to
 * maxSuggestEdgesPerWord edges before their visibility is checked, so the work is bounded by the
 * question whatever the size of the graph. The LIKE re-checks the range under any collation.
 */
async function entityValuesByWord(m: EntityManager, scope: GraphScope, kinds: EdgeKinds, words: string[]): Promise<string[]> {
  const params = new SqlParams(scope.params.values);
  const kb = params.add(scope.kbid);
  const lo = params.add(words);
  const hi = params.add(words.map((w) => w + TOP));
  const like = params.add(words.map((w) => `${escapeLike(w)}%`));
  const each = params.add(GRAPH_EXPLORATION.maxSuggestEdgesPerWord);
  const byPrefix = (col: 'source_value' | 'dest_value', type: 'source_type' | 'dest_type') =>
    `SELECT c.* FROM unnest(${lo}::text[], ${hi}::text[], ${like}::text[]) AS w(lo, hi, pat)
       CROSS JOIN LATERAL (
         SELECT r.*, lower(r.${col}) AS v FROM content.search_relations r
          WHERE r.kbid = ${kb} AND lower(r.${col}) >= w.lo AND lower(r.${col}) < w.hi
            AND lower(r.${col}) LIKE w.pat AND r.${type} = 'entity'
          ORDER BY lower(r.${col}) LIMIT ${each}) AS c`;
  // The KB compared as text: the planner would otherwise take the (kbid, name) index and filter the whole KB by word.
  const byWord = (col: 'source_value' | 'dest_value', type: 'source_type' | 'dest_type') =>
    `SELECT c.* FROM unnest(${lo}::text[]) AS w(word)
       CROSS JOIN LATERAL (
         SELECT r.*, lower(r.${col}) AS v FROM content.search_relations r
          WHERE ${RELATION_NAME_WORDS(`r.${col}`)} @> ARRAY[w.word] AND r.kbid::text = ${kb}::text AND r.${type} = 'entity'
          LIMIT ${each}) AS c`;
  const rows = (await m.query(
    `SELECT DISTINCT e.v FROM (
        ${byPrefix('source_value', 'source_type')} UNION ALL ${byPrefix('dest_value', 'dest_type')}
        UNION ALL ${byWord('source_value', 'source_type')} UNION ALL ${byWord('dest_value', 'dest_type')}) AS e
      WHERE ${edgeConditions(scope, params, kinds)}
      ORDER BY 1 LIMIT ${params.add(GRAPH_EXPLORATION.maxQueryEntities)}`,
    params.values,
  )) as { v: string }[];
  return rows.map((r) => r.v);
}

/**
 * The entities of the question among the graph's usable nodes. `predict`: a node whose whole name
 * is one of the question's word n-grams (1–4 words, case-insensitive), as the `relations` feature
 * finds them. `suggest`: a node whose name starts with one of the question's words (3+ letters),
 * or has one of them as a whole word, read through the indexes (entityValuesByWord); when none is
 * found, `predict`'s.
 */
export async function detectEntities(
  m: EntityManager,
  scope: GraphScope,
  kinds: EdgeKinds,
  question: string,
  mode: 'predict' | 'suggest',
): Promise<string[]> {
  if (mode === 'suggest') {
    const words = [...new Set(question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]
      .filter((w) => w.length >= 3 && w.length <= GRAPH_EXPLORATION.maxWordChars)
      .slice(0, GRAPH_EXPLORATION.maxSuggestWords);
    if (words.length) {
      const found = await entityValuesByWord(m, scope, kinds, words);
      if (found.length) return found;
    }
  }
  const grams = queryNgrams(question.slice(0, 2000));
  return grams.length ? entityValues(m, scope, kinds, grams) : [];
}

/** Usable edges touching one of the entities (lower-cased values), other than those already read, oldest first, at most `limit`. */
export async function edgesAround(
  m: EntityManager,
  scope: GraphScope,
  kinds: EdgeKinds,
  entities: string[],
  seen: string[],
  limit: number,
): Promise<EdgeRow[]> {
  if (!entities.length || limit <= 0) return [];
  const params = new SqlParams(scope.params.values);
  const f = params.add(entities);
  return (await m.query(
    `SELECT ${EDGE_COLUMNS} FROM content.search_relations e
      WHERE ((e.source_type = 'entity' AND lower(e.source_value) = ANY(${f}::text[]))
          OR (e.dest_type = 'entity' AND lower(e.dest_value) = ANY(${f}::text[])))
        AND NOT (e.id = ANY(${params.add(seen)}::bigint[]))
        AND ${edgeConditions(scope, params, kinds)}
      ORDER BY e.id LIMIT ${params.add(limit)}`,
    params.values,
  )) as EdgeRow[];
}

/** The titles of resources (the resource end of processing's edges is shown by its title). */
export async function resourceTitles(m: EntityManager, kbid: string, rids: string[]): Promise<Map<string, string>> {
  if (!rids.length) return new Map();
  const rows = (await m.query(`SELECT id::text AS id, title FROM content.resources WHERE kbid = $1 AND id = ANY($2::uuid[])`, [
    kbid,
    rids,
  ])) as { id: string; title: string | null }[];
  return new Map(rows.map((r) => [r.id, r.title ?? '']));
}

/** Paragraphs by paragraph id, under the request's scope (a paragraph the caller may not see is not read). */
export async function scopedParagraphs(m: EntityManager, scope: GraphScope, paragraphIds: string[]): Promise<ParagraphRow[]> {
  if (!paragraphIds.length) return [];
  const params = new SqlParams(scope.params.values);
  return (await m.query(
    `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs p WHERE p.paragraph_id = ANY(${params.add(paragraphIds)}::text[]) AND ${scope.where}`,
    params.values,
  )) as ParagraphRow[];
}
