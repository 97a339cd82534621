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

/** Entity values (lower-cased) among usable edges whose value matches: one of the values, or one of the LIKE patterns. */
async function entityValues(
  m: EntityManager,
  scope: GraphScope,
  kinds: EdgeKinds,
  match: { values: string[] } | { patterns: string[] },
): Promise<string[]> {
  const params = new SqlParams(scope.params.values);
  const cond =
    'values' in match
      ? (col: string, arg: string) => `lower(${col}) = ANY(${arg}::text[])`
      : (col: string, arg: string) => `lower(${col}) LIKE ANY(${arg}::text[])`;
  const arg = params.add('values' in match ? match.values : match.patterns);
  const rows = (await m.query(
    `SELECT DISTINCT lower(x.v) AS v FROM content.search_relations e
       CROSS JOIN LATERAL (VALUES (e.source_value, e.source_type), (e.dest_value, e.dest_type)) AS x(v, t)
      WHERE (${cond('e.source_value', arg)} OR ${cond('e.dest_value', arg)}) AND x.t = 'entity' AND ${cond('x.v', arg)}
        AND ${edgeConditions(scope, params, kinds)}
      ORDER BY 1 LIMIT ${params.add(GRAPH_EXPLORATION.maxQueryEntities)}`,
    params.values,
  )) as { v: string }[];
  return rows.map((r) => r.v);
}

/**
 * The entities of the question among the graph's usable nodes. `predict`: a node whose whole name
 * is one of the question's word n-grams (1–4 words, case-insensitive), as the `relations` feature
 * finds them. `suggest`: a node with a word starting with one of the question's words (3+ letters),
 * the way /suggest matches entities; when none is found, `predict`'s.
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
      const patterns = words.flatMap((w) => [`${escapeLike(w)}%`, `% ${escapeLike(w)}%`]);
      const found = await entityValues(m, scope, kinds, { patterns });
      if (found.length) return found;
    }
  }
  const grams = queryNgrams(question.slice(0, 2000));
  return grams.length ? entityValues(m, scope, kinds, { values: grams }) : [];
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
