import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Check, checks, Closed, isPlainObject, whenAbsent, type MemberCheck } from '../../common/member-checks';
import { filterExpressionCheck, withinExpressionLimits, type FieldFilterExpression } from './filter-expression';
import { securityCheck } from './retrieval.dto';
import { FilterExpressionNode, filterExpressionMember } from './filter-expression.schema';
import { NODE_TYPES, parseGraphExpr, RELATION_TYPES, type GraphKind, type NodeType, type RelationType } from './graph-query';
import { REQUEST_LIMITS } from './request-limits';
import { searchPayloadOf, type SearchPayload } from './search-payload';

/** `top_k` of the /graph* routes. */
export const GRAPH_MAX_TOP_K = 500;

/** `query`: required, bounded, then parsed by the graph query language of `kind` (problems at their path). */
function graphQueryMemberCheck(kind: GraphKind): MemberCheck {
  return whenAbsent((v, loc, issues) => {
    if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
    if (!withinExpressionLimits(v, loc, issues)) return;
    parseGraphExpr(v, kind, loc, { issue: (at, msg, type) => issues.push({ loc: at, msg, type }) });
  });
}

/** Graph filters are `{"field": <expression>}`: the paragraph expression and the operator do not apply. */
const graphFilterCheck: MemberCheck = (fe, loc, issues, owner) => {
  if (isPlainObject(fe)) {
    for (const k of ['paragraph', 'operator']) {
      if (k in fe)
        issues.push({
          loc: [...loc, k],
          msg: 'Extra inputs are not permitted (graph filters are {"field": <expression>})',
          type: 'extra_forbidden',
        });
    }
    const rest = Object.fromEntries(Object.entries(fe).filter(([k]) => k !== 'paragraph' && k !== 'operator'));
    return filterExpressionCheck('paragraph')(rest, loc, issues, owner);
  }
  return filterExpressionCheck('paragraph')(fe, loc, issues, owner);
};

/** A node pattern of a graph query: every member given must match. */
export class GraphNodePattern {
  @ApiPropertyOptional() value?: string;
  @ApiPropertyOptional({
    enum: ['exact', 'fuzzy'],
    default: 'exact',
    description: 'fuzzy: within one edit (up to five characters), two above; needs a value of 3 characters or more.',
  })
  match?: 'exact' | 'fuzzy';
  @ApiPropertyOptional({ enum: NODE_TYPES, nullable: true, default: 'entity', description: 'null: any type.' }) type?: NodeType | null;
  @ApiPropertyOptional({ description: 'The entity group, e.g. PERSON.' }) group?: string;
}

export class GraphRelationPattern {
  @ApiPropertyOptional() label?: string;
  @ApiPropertyOptional({ enum: RELATION_TYPES }) type?: RelationType;
}

/**
 * One expression of the graph query language, recursive: `{and: [...]}`, `{or: [...]}`, `{not: ...}`,
 * or a condition tagged by `prop` with that condition's members (a node's, a relation's, a path's,
 * or `{prop: generated, by, da_task?}`). Each route takes the conditions its `prop` list names.
 */
export class GraphQueryExpression {
  @ApiPropertyOptional({ type: () => [GraphQueryExpression], minItems: 1 }) and?: GraphQueryExpression[];
  @ApiPropertyOptional({ type: () => [GraphQueryExpression], minItems: 1 }) or?: GraphQueryExpression[];
  @ApiPropertyOptional({ type: () => GraphQueryExpression }) not?: GraphQueryExpression;
  @ApiPropertyOptional({ enum: ['path', 'source_node', 'destination_node', 'node', 'relation', 'generated'] }) prop?: string;
  @ApiPropertyOptional({ description: 'node conditions' }) value?: string;
  @ApiPropertyOptional({ enum: ['exact', 'fuzzy'], description: 'node conditions' }) match?: 'exact' | 'fuzzy';
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: `node conditions: ${NODE_TYPES.join(', ')} or null (any); relation conditions: ${RELATION_TYPES.join(', ')}`,
  })
  type?: string | null;
  @ApiPropertyOptional({ description: 'node conditions' }) group?: string;
  @ApiPropertyOptional({ description: 'relation conditions' }) label?: string;
  @ApiPropertyOptional({ type: GraphNodePattern, description: 'path conditions' }) source?: GraphNodePattern;
  @ApiPropertyOptional({ type: GraphNodePattern, description: 'path conditions' }) destination?: GraphNodePattern;
  @ApiPropertyOptional({ type: GraphRelationPattern, description: 'path conditions' }) relation?: GraphRelationPattern;
  @ApiPropertyOptional({ default: false, description: 'path conditions: match either direction' }) undirected?: boolean;
  @ApiPropertyOptional({ enum: ['data-augmentation', 'processor', 'user'], description: 'generated conditions' }) by?:
    'data-augmentation' | 'processor' | 'user';
  @ApiPropertyOptional({ description: 'generated conditions, by data-augmentation only' }) da_task?: string;
}

/** The members every /graph* body shares besides `query`, which each route declares with its own conditions. */
@ApiExtraModels(GraphQueryExpression, FilterExpressionNode)
export class GraphRequestBase {
  @ApiPropertyOptional({ minimum: 1, maximum: GRAPH_MAX_TOP_K, default: 50 }) @Check(checks.int(1, GRAPH_MAX_TOP_K)) top_k?: number;
  @ApiPropertyOptional({
    type: 'object',
    properties: { field: filterExpressionMember('Expression on resources and fields (the /find filter_expression language).') },
    additionalProperties: false,
    description: 'Only the edges seen in paragraphs of the matching fields.',
  })
  @Check(graphFilterCheck)
  filter_expression?: { field?: FieldFilterExpression };
  @ApiPropertyOptional({
    type: 'object',
    properties: { groups: { type: 'array', items: { type: 'string' }, maxItems: REQUEST_LIMITS.listItems } },
  })
  @Check(securityCheck)
  security?: { groups?: string[]; access_groups?: string[] };
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) show_hidden?: boolean;
}

/** POST /graph: paths (source node → relation → destination node). */
@Closed()
export class GraphPathsRequest extends GraphRequestBase {
  @ApiProperty({
    type: () => GraphQueryExpression,
    description: 'Conditions: path, source_node, destination_node, node, relation, generated.',
  })
  @Check(graphQueryMemberCheck('paths'))
  query!: GraphQueryExpression;
}

/** POST /graph/nodes. */
@Closed()
export class GraphNodesRequest extends GraphRequestBase {
  @ApiProperty({ type: () => GraphQueryExpression, description: 'Conditions: node, generated.' })
  @Check(graphQueryMemberCheck('nodes'))
  query!: GraphQueryExpression;
}

/** POST /graph/relations. */
@Closed()
export class GraphRelationsRequest extends GraphRequestBase {
  @ApiProperty({ type: () => GraphQueryExpression, description: 'Conditions: relation, generated.' })
  @Check(graphQueryMemberCheck('relations'))
  query!: GraphQueryExpression;
}

export class GraphNode {
  @ApiProperty() value!: string;
  @ApiProperty({ enum: NODE_TYPES }) type!: string;
  @ApiProperty({ description: 'The entity group; empty for other types.' }) group!: string;
}

export class GraphRelation {
  @ApiProperty() label!: string;
  @ApiProperty({ enum: RELATION_TYPES }) type!: string;
}

export class GraphPath {
  @ApiProperty({ type: GraphNode }) source!: GraphNode;
  @ApiProperty({ type: GraphRelation }) relation!: GraphRelation;
  @ApiProperty({ type: GraphNode }) destination!: GraphNode;
}

export class GraphPathsResponse {
  @ApiProperty({ type: [GraphPath] }) paths!: GraphPath[];
}

export class GraphNodesResponse {
  @ApiProperty({ type: [GraphNode] }) nodes!: GraphNode[];
}

export class GraphRelationsResponse {
  @ApiProperty({ type: [GraphRelation] }) relations!: GraphRelation[];
}

export const GraphPathsEnvelope = searchPayloadOf(GraphPathsRequest, 'GraphPathsEnvelope');
export type GraphPathsEnvelope = SearchPayload<GraphPathsRequest>;
export const GraphNodesEnvelope = searchPayloadOf(GraphNodesRequest, 'GraphNodesEnvelope');
export type GraphNodesEnvelope = SearchPayload<GraphNodesRequest>;
export const GraphRelationsEnvelope = searchPayloadOf(GraphRelationsRequest, 'GraphRelationsEnvelope');
export type GraphRelationsEnvelope = SearchPayload<GraphRelationsRequest>;
