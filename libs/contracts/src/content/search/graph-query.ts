import { isPlainObject as isObject, type Loc } from '../../common/member-checks';

/**
 * The graph query language (API-MAP 2.8): boolean expressions over paths, nodes, relations and
 * who generated them, as `/graph*` bodies and /find's `graph_query` take them. Parsed here so the
 * request DTOs and the content service read it the same way.
 */
export const RELATION_TYPES = ['ABOUT', 'CHILD', 'COLAB', 'ENTITY', 'OTHER', 'SYNONYM'] as const;
export const NODE_TYPES = ['entity', 'label', 'resource', 'user'] as const;
export type RelationType = (typeof RELATION_TYPES)[number];
export type NodeType = (typeof NODE_TYPES)[number];

/** Where a parser reports a problem (a request reader, or a list of issues). */
export interface IssueSink {
  issue(loc: Loc, msg: string, type: string): void;
}

export type GraphKind = 'paths' | 'nodes' | 'relations';

/** A node pattern: every member that is set must match; `type` defaults to entity, `null` means any. */
export interface NodePattern {
  value?: string;
  match: 'exact' | 'fuzzy';
  type: NodeType | null;
  group?: string;
}

export interface RelationPattern {
  label?: string;
  type?: RelationType;
}

export type GraphExpr =
  | { op: 'and' | 'or'; items: GraphExpr[] }
  | { op: 'not'; item: GraphExpr }
  | { op: 'path'; source?: NodePattern; relation?: RelationPattern; destination?: NodePattern; undirected: boolean }
  | { op: 'node'; side: 'source' | 'destination' | 'any'; node: NodePattern }
  | { op: 'relation'; relation: RelationPattern }
  | { op: 'generated'; by: 'data-augmentation' | 'processor' | 'user'; daTask?: string };

export const GRAPH_QUERY_MAX_DEPTH = 10;
const MAX_DEPTH = GRAPH_QUERY_MAX_DEPTH;
/** Which query members each endpoint takes (nucliadb_models graph/requests.py). */
const ALLOWED: Record<GraphKind, ReadonlySet<string>> = {
  paths: new Set(['and', 'or', 'not', 'path', 'source_node', 'destination_node', 'node', 'relation', 'generated']),
  nodes: new Set(['and', 'or', 'not', 'node', 'generated']),
  relations: new Set(['and', 'or', 'not', 'relation', 'generated']),
};

/** A `/graph` path query read from a request member (`/find`'s `graph_query`), problems reported at `loc`. */
export function parseGraphQuery(raw: unknown, loc: Loc, r: IssueSink): GraphExpr | undefined {
  return parseExpr(raw, 'paths', loc, r, 0);
}

/** A query of `kind` (`/graph`, `/graph/nodes`, `/graph/relations`). */
export function parseGraphExpr(raw: unknown, kind: GraphKind, loc: Loc, r: IssueSink): GraphExpr | undefined {
  return parseExpr(raw, kind, loc, r, 0);
}

/** Reads one query expression, reporting every problem at its location. */
function parseExpr(v: unknown, kind: GraphKind, loc: Loc, r: IssueSink, depth: number): GraphExpr | undefined {
  if (!isObject(v)) {
    r.issue(loc, 'Input should be a valid object', 'model_type');
    return undefined;
  }
  if (depth > MAX_DEPTH) {
    r.issue(loc, `Expressions may nest at most ${MAX_DEPTH} deep`, 'value_error');
    return undefined;
  }
  const bool = (['and', 'or', 'not'] as const).find((k) => k in v);
  const tag = bool ?? (typeof v['prop'] === 'string' ? v['prop'] : undefined);
  if (!tag || !ALLOWED[kind].has(tag)) {
    r.issue(
      loc,
      `Unknown expression; one of ${[...ALLOWED[kind]].map((k) => (['and', 'or', 'not'].includes(k) ? `{"${k}": …}` : `{"prop": "${k}"}`)).join(', ')}`,
      'union_tag_invalid',
    );
    return undefined;
  }
  if (bool) {
    for (const k of Object.keys(v)) if (k !== bool) r.issue([...loc, k], 'Extra inputs are not permitted', 'extra_forbidden');
    if (bool === 'not') {
      const item = parseExpr(v['not'], kind, [...loc, 'not'], r, depth + 1);
      return item ? { op: 'not', item } : undefined;
    }
    const list = v[bool];
    if (!Array.isArray(list) || list.length === 0) {
      r.issue([...loc, bool], 'Input should be a non-empty list', 'list_type');
      return undefined;
    }
    const items = list.map((x, i) => parseExpr(x, kind, [...loc, bool, i], r, depth + 1));
    return items.every((x): x is GraphExpr => !!x) ? { op: bool, items } : undefined;
  }
  const only = (allowed: string[]): void => {
    for (const k of Object.keys(v)) if (!allowed.includes(k)) r.issue([...loc, k], 'Extra inputs are not permitted', 'extra_forbidden');
  };
  switch (tag) {
    case 'path': {
      only(['prop', 'source', 'relation', 'destination', 'undirected']);
      const source = v['source'] === undefined || v['source'] === null ? undefined : parseNode(v['source'], [...loc, 'source'], r, false);
      const destination =
        v['destination'] === undefined || v['destination'] === null
          ? undefined
          : parseNode(v['destination'], [...loc, 'destination'], r, false);
      const relation =
        v['relation'] === undefined || v['relation'] === null ? undefined : parseRelation(v['relation'], [...loc, 'relation'], r, false);
      const undirected = v['undirected'] ?? false;
      if (typeof undirected !== 'boolean') r.issue([...loc, 'undirected'], 'Input should be a valid boolean', 'bool_type');
      return { op: 'path', source, relation, destination, undirected: undirected === true };
    }
    case 'node':
    case 'source_node':
    case 'destination_node': {
      const node = parseNode(v, loc, r, true);
      const side = tag === 'node' ? 'any' : tag === 'source_node' ? 'source' : 'destination';
      return node ? { op: 'node', side, node } : undefined;
    }
    case 'relation': {
      const relation = parseRelation(v, loc, r, true);
      return relation ? { op: 'relation', relation } : undefined;
    }
    default: {
      only(['prop', 'by', 'da_task']);
      const by = v['by'];
      if (by !== 'data-augmentation' && by !== 'processor' && by !== 'user') {
        r.issue([...loc, 'by'], "Input should be 'data-augmentation', 'processor' or 'user'", 'enum');
        return undefined;
      }
      const daTask = v['da_task'];
      if (daTask !== undefined && daTask !== null) {
        if (typeof daTask !== 'string') r.issue([...loc, 'da_task'], 'Input should be a valid string', 'string_type');
        else if (by !== 'data-augmentation')
          r.issue([...loc, 'da_task'], 'da_task can only be specified if by=data-augmentation', 'value_error');
      }
      return { op: 'generated', by, ...(typeof daTask === 'string' ? { daTask } : {}) };
    }
  }
}

function parseNode(v: unknown, loc: Loc, r: IssueSink, withProp: boolean): NodePattern | undefined {
  if (!isObject(v)) {
    r.issue(loc, 'Input should be a valid object', 'model_type');
    return undefined;
  }
  for (const k of Object.keys(v))
    if (!['value', 'match', 'type', 'group', ...(withProp ? ['prop'] : [])].includes(k))
      r.issue([...loc, k], 'Extra inputs are not permitted', 'extra_forbidden');
  let ok = true;
  const value = v['value'];
  if (value !== undefined && value !== null && typeof value !== 'string') {
    r.issue([...loc, 'value'], 'Input should be a valid string', 'string_type');
    ok = false;
  }
  const match = v['match'] ?? 'exact';
  if (match !== 'exact' && match !== 'fuzzy') {
    r.issue([...loc, 'match'], "Input should be 'exact' or 'fuzzy'", 'enum');
    ok = false;
  } else if (match === 'fuzzy') {
    if (typeof value !== 'string') {
      r.issue(loc, 'Fuzzy match can only be used if a node value is provided', 'value_error');
      ok = false;
    } else if (value.length < 3) {
      r.issue(loc, 'Fuzzy match must be used with values containing at least 3 characters', 'value_error');
      ok = false;
    }
  }
  // Absent means an entity node; an explicit null, any type.
  const type = 'type' in v ? v['type'] : 'entity';
  if (type !== null && !NODE_TYPES.includes(type as NodeType)) {
    r.issue([...loc, 'type'], `Input should be one of ${NODE_TYPES.join(', ')}`, 'enum');
    ok = false;
  }
  const group = v['group'];
  if (group !== undefined && group !== null && typeof group !== 'string') {
    r.issue([...loc, 'group'], 'Input should be a valid string', 'string_type');
    ok = false;
  }
  if (!ok) return undefined;
  return {
    match: match as NodePattern['match'],
    type: type as NodeType | null,
    ...(typeof value === 'string' ? { value } : {}),
    ...(typeof group === 'string' ? { group } : {}),
  };
}

function parseRelation(v: unknown, loc: Loc, r: IssueSink, withProp: boolean): RelationPattern | undefined {
  if (!isObject(v)) {
    r.issue(loc, 'Input should be a valid object', 'model_type');
    return undefined;
  }
  for (const k of Object.keys(v))
    if (!['label', 'type', ...(withProp ? ['prop'] : [])].includes(k))
      r.issue([...loc, k], 'Extra inputs are not permitted', 'extra_forbidden');
  const label = v['label'];
  const type = v['type'];
  let ok = true;
  if (label !== undefined && label !== null && typeof label !== 'string') {
    r.issue([...loc, 'label'], 'Input should be a valid string', 'string_type');
    ok = false;
  }
  if (type !== undefined && type !== null && !RELATION_TYPES.includes(type as RelationType)) {
    r.issue([...loc, 'type'], `Input should be one of ${RELATION_TYPES.join(', ')}`, 'enum');
    ok = false;
  }
  if (!ok) return undefined;
  return { ...(typeof label === 'string' ? { label } : {}), ...(typeof type === 'string' ? { type: type as RelationType } : {}) };
}
