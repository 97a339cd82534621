import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  parseGraphExpr,
  type GraphExpr,
  type GraphKind,
  type GraphNodesResponse,
  type GraphPathsResponse,
  type GraphRelationsResponse,
  type GraphNodesRequest,
  type GraphPathsRequest,
  type GraphRelationsRequest,
  type NodePattern,
  type RelationPattern,
  type SearchPayload,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { PARAGRAPH_TARGET, FilterCompiler, securityCondition, securityGroupsOf } from './query/filters';
import type { RetrieverHit } from './query/fusion';
import { Issues } from './query/issues';
import type { RetrievalScope } from './query/retrievers';
import { SqlParams } from './query/sql';
import { SearchContextService } from './search-context.service';

/** The graph query language is declared in the contracts (graph-query.ts). */
export { parseGraphQuery, type GraphExpr, type GraphKind } from '@kb/contracts';

type GraphPayload = SearchPayload<GraphPathsRequest | GraphNodesRequest | GraphRelationsRequest> & { signal?: AbortSignal };

/**
 * Graph queries over the knowledge graph of a KB (API-MAP 2.8): `/graph` answers paths
 * (source → relation → destination), `/graph/nodes` the nodes and `/graph/relations` the relation
 * kinds matching a boolean query. Edges come from processing (resource → entity) and from the
 * resources themselves (user relations, ABOUT their labels); an edge is visible only through a
 * paragraph of its resource that the caller may see (security groups, hidden resources) and that
 * passes the request's field filter — the same conditions as /find.
 */
@Injectable()
export class GraphService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly context: SearchContextService,
  ) {}

  /**
   * `req.body` was validated by its DTO (GraphPathsRequest, GraphNodesRequest, GraphRelationsRequest);
   * `signal`: the caller went away; the fuzzy look-ups (one query per value) stop early.
   */
  async search(kind: 'paths', req: GraphPayload): Promise<GraphPathsResponse>;
  async search(kind: 'nodes', req: GraphPayload): Promise<GraphNodesResponse>;
  async search(kind: 'relations', req: GraphPayload): Promise<GraphRelationsResponse>;
  async search(kind: GraphKind, req: GraphPayload): Promise<GraphPathsResponse | GraphNodesResponse | GraphRelationsResponse> {
    const body = req.body;
    const issues = new Issues();
    const topK = body.top_k ?? 50;
    // The query's parse into the internal expression (the DTO checked it all through; the parser reports as it does).
    const expr = parseGraphExpr(body.query, kind, ['query'], issues);
    const params = new SqlParams();
    const kbParam = params.add(req.kbid);
    const field = body.filter_expression?.field;
    const languages = field ? await this.context.kbLanguages(req.kbid) : [];
    // Graph filters are {"field": <expression>} (the DTO refuses any other member).
    const filterSql = new FilterCompiler(params, PARAGRAPH_TARGET(kbParam), languages).compile(
      { filter_expression: field ? { field } : undefined },
      issues,
      { allowFieldFilters: false },
    );
    issues.throwIfAny();
    const groups = securityGroupsOf(body.security, req.forced_groups);
    const showHidden = body.show_hidden ?? false;

    // An edge is visible through one paragraph of its resource (of its field, for a field's edges).
    const visible = `EXISTS (SELECT 1 FROM content.search_paragraphs p
        WHERE p.rid = e.rid AND p.kbid = ${kbParam} AND (e.field = '' OR p.field = e.field)
          AND ${filterSql} AND ${securityCondition(params, 'p.groups', groups, false)}${showHidden ? '' : ' AND NOT p.hidden'})`;
    const fuzzy = await this.fuzzyValues(req.kbid, expr as GraphExpr, req.signal);
    req.signal?.throwIfAborted();
    const limit = params.add(topK);
    if (kind === 'paths') {
      const where = compile(expr as GraphExpr, params, fuzzy, edgeColumns);
      const rows = (await this.ds.query(
        `SELECT DISTINCT e.source_value, e.source_type, e.source_group, e.relation, e.label, e.dest_value, e.dest_type, e.dest_group
           FROM content.search_relations e
          WHERE e.kbid = ${kbParam} AND (${where}) AND ${visible}
          ORDER BY 1, 2, 3, 4, 5, 6, 7, 8 LIMIT ${limit}`,
        params.values,
      )) as EdgeRow[];
      return {
        paths: rows.map((x) => ({
          source: { value: x.source_value, type: x.source_type, group: x.source_group },
          relation: { label: x.label, type: x.relation },
          destination: { value: x.dest_value, type: x.dest_type, group: x.dest_group },
        })),
      };
    }
    if (kind === 'nodes') {
      const where = compile(expr as GraphExpr, params, fuzzy, nodeColumns);
      const rows = (await this.ds.query(
        `SELECT DISTINCT n.value, n.type, n.grp FROM (
            SELECT e.source_value AS value, e.source_type AS type, e.source_group AS grp, e.generated FROM content.search_relations e WHERE e.kbid = ${kbParam} AND ${visible}
            UNION ALL
            SELECT e.dest_value, e.dest_type, e.dest_group, e.generated FROM content.search_relations e WHERE e.kbid = ${kbParam} AND ${visible}
          ) n
          WHERE ${where} ORDER BY 1, 2, 3 LIMIT ${limit}`,
        params.values,
      )) as { value: string; type: string; grp: string }[];
      return { nodes: rows.map((x) => ({ value: x.value, type: x.type, group: x.grp })) };
    }
    const where = compile(expr as GraphExpr, params, fuzzy, edgeColumns);
    const rows = (await this.ds.query(
      `SELECT DISTINCT e.label, e.relation FROM content.search_relations e
        WHERE e.kbid = ${kbParam} AND (${where}) AND ${visible} ORDER BY 1, 2 LIMIT ${limit}`,
      params.values,
    )) as { label: string; relation: string }[];
    return { relations: rows.map((x) => ({ label: x.label, type: x.relation })) };
  }

  /**
   * The `graph` feature of /find: the paragraphs the matching edges were found in (processing records
   * the paragraph of each entity relation), under the request's scope (filters, security, hidden),
   * scored by how many matching edges each holds.
   */
  async paragraphHits(kbid: string, expr: GraphExpr, scope: RetrievalScope, limit: number): Promise<RetrieverHit[]> {
    const fuzzy = await this.fuzzyValues(kbid, expr);
    const params = new SqlParams(scope.params.values);
    const where = compile(expr, params, fuzzy, edgeColumns);
    const rows = (await this.ds.query(
      `SELECT p.id::text AS id, count(*)::float8 AS score
         FROM content.search_relations e
         JOIN content.search_paragraphs p ON p.kbid = e.kbid AND p.paragraph_id = e.paragraph
        WHERE e.kbid = ${params.add(kbid)} AND (${where}) AND ${scope.where}
        GROUP BY p.id ORDER BY score DESC, p.id LIMIT ${params.add(limit)}`,
      params.values,
    )) as { id: string; score: number }[];
    return rows.map((x) => ({ id: x.id, score: x.score }));
  }

  /**
   * Fuzzy node values resolved to the KB's node values within their edit distance (one edit up to
   * five characters, two above), case-insensitively: portable to any PostgreSQL, no extension.
   */
  private async fuzzyValues(kbid: string, expr: GraphExpr | undefined, signal?: AbortSignal): Promise<Map<string, string[]>> {
    const wanted = new Set<string>();
    const walk = (e: GraphExpr | undefined): void => {
      if (!e) return;
      if (e.op === 'and' || e.op === 'or') e.items.forEach(walk);
      else if (e.op === 'not') walk(e.item);
      else if (e.op === 'node' && e.node.match === 'fuzzy' && e.node.value) wanted.add(e.node.value.toLowerCase());
      else if (e.op === 'path')
        for (const n of [e.source, e.destination]) if (n?.match === 'fuzzy' && n.value) wanted.add(n.value.toLowerCase());
    };
    walk(expr);
    const out = new Map<string, string[]>();
    for (const value of wanted) {
      signal?.throwIfAborted();
      const distance = fuzzyDistance(value);
      const rows = (await this.ds.query(
        `SELECT DISTINCT v FROM (
            SELECT lower(source_value) AS v FROM content.search_relations WHERE kbid = $1
            UNION SELECT lower(dest_value) FROM content.search_relations WHERE kbid = $1
          ) x WHERE length(v) BETWEEN $2 AND $3`,
        [kbid, value.length - distance, value.length + distance],
      )) as { v: string }[];
      out.set(
        value,
        rows.map((x) => x.v).filter((v) => editDistance(v, value, distance) <= distance),
      );
    }
    return out;
  }
}

interface EdgeRow {
  source_value: string;
  source_type: string;
  source_group: string;
  relation: string;
  label: string;
  dest_value: string;
  dest_type: string;
  dest_group: string;
}

/** Column names a compiled expression refers to: an edge's two ends, or a node row (`n`). */
interface Columns {
  side(side: 'source' | 'destination'): { value: string; type: string; group: string };
  relation?: { type: string; label: string };
  generated: string;
}

const edgeColumns: Columns = {
  side: (s) =>
    s === 'source'
      ? { value: 'e.source_value', type: 'e.source_type', group: 'e.source_group' }
      : { value: 'e.dest_value', type: 'e.dest_type', group: 'e.dest_group' },
  relation: { type: 'e.relation', label: 'e.label' },
  generated: 'e.generated',
};

const nodeColumns: Columns = {
  side: () => ({ value: 'n.value', type: 'n.type', group: 'n.grp' }),
  generated: 'n.generated',
};

export function fuzzyDistance(value: string): number {
  return value.length <= 5 ? 1 : 2;
}

/** Levenshtein distance, stopping early once it exceeds `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] as number;
}

function compile(e: GraphExpr, params: SqlParams, fuzzy: Map<string, string[]>, cols: Columns): string {
  const node = (n: NodePattern, side: 'source' | 'destination'): string => {
    const c = cols.side(side);
    const conds: string[] = [];
    if (n.value !== undefined) {
      conds.push(
        n.match === 'fuzzy'
          ? `lower(${c.value}) = ANY(${params.add(fuzzy.get(n.value.toLowerCase()) ?? [])}::text[])`
          : `lower(${c.value}) = lower(${params.add(n.value)})`,
      );
    }
    if (n.type) conds.push(`${c.type} = ${params.add(n.type)}`);
    if (n.group !== undefined) conds.push(`${c.group} = ${params.add(n.group)}`);
    return conds.length ? `(${conds.join(' AND ')})` : 'TRUE';
  };
  const relation = (p: RelationPattern): string => {
    const c = cols.relation as { type: string; label: string };
    const conds: string[] = [];
    if (p.type) conds.push(`${c.type} = ${params.add(p.type)}`);
    if (p.label !== undefined) conds.push(`lower(${c.label}) = lower(${params.add(p.label)})`);
    return conds.length ? `(${conds.join(' AND ')})` : 'TRUE';
  };
  switch (e.op) {
    case 'and':
    case 'or':
      return e.items.length
        ? `(${e.items.map((i) => compile(i, params, fuzzy, cols)).join(e.op === 'and' ? ' AND ' : ' OR ')})`
        : e.op === 'and'
          ? 'TRUE'
          : 'FALSE';
    case 'not':
      return `NOT (${compile(e.item, params, fuzzy, cols)})`;
    case 'node':
      return e.side === 'any' ? `(${node(e.node, 'source')} OR ${node(e.node, 'destination')})` : node(e.node, e.side);
    case 'relation':
      return relation(e.relation);
    case 'generated':
      // Nothing here is generated by data augmentation; processor and user edges are told apart.
      return e.by === 'data-augmentation' ? 'FALSE' : `${cols.generated} = ${params.add(e.by)}`;
    case 'path': {
      const forward = [
        e.source ? node(e.source, 'source') : 'TRUE',
        e.relation ? relation(e.relation) : 'TRUE',
        e.destination ? node(e.destination, 'destination') : 'TRUE',
      ].join(' AND ');
      if (!e.undirected) return `(${forward})`;
      const backward = [
        e.source ? node(e.source, 'destination') : 'TRUE',
        e.relation ? relation(e.relation) : 'TRUE',
        e.destination ? node(e.destination, 'source') : 'TRUE',
      ].join(' AND ');
      return `((${forward}) OR (${backward}))`;
    }
  }
}
