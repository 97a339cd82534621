import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { nestedCheck } from '../common/validation';
import { Check, checks, isPlainObject, whenAbsent, type MemberCheck } from '../common/member-checks';

/** Bounds of the REMi routes (beyond them: 422). */
export const REMI_QUERY_LIMITS = {
  /** Records per page of Query Rag Requests By Scores. */
  pageSize: 100,
  defaultPageSize: 20,
  /** Time buckets of one Aggregated Remi Scores Across Time answer. */
  buckets: 1000,
} as const;

export const REMI_STATUSES = ['SUCCESS', 'ERROR', 'NO_CONTEXT'] as const;
export type RemiStatus = (typeof REMI_STATUSES)[number];
export const REMI_OPERATIONS = ['gt', 'ge', 'lt', 'le', 'eq'] as const;
export type RemiOperation = (typeof REMI_OPERATIONS)[number];
export const REMI_AGGREGATIONS = ['average', 'min', 'max'] as const;
export type RemiAggregation = (typeof REMI_AGGREGATIONS)[number];

const YEAR_MONTH = /^\d{4}-(0[1-9]|1[012])$/;
const absent = (v: unknown): boolean => v === undefined || v === null;
const quoted = (allowed: readonly string[]): string => allowed.map((a) => `'${a}'`).join(', ');

/** Compares the aggregate of a request's context relevance scores with `value`. */
export class RemiContextRelevanceFilter {
  @ApiProperty({ minimum: 0, maximum: 5 }) value!: number;
  @ApiProperty({ enum: REMI_OPERATIONS }) operation!: RemiOperation;
  @ApiPropertyOptional({ enum: REMI_AGGREGATIONS, default: 'average' }) aggregation?: RemiAggregation;
}

export class RemiPagination {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: REMI_QUERY_LIMITS.pageSize, default: REMI_QUERY_LIMITS.defaultPageSize })
  limit?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, nullable: true, description: 'A record id: the page starts after it.' })
  starting_after?: number | null;
}

const contextRelevanceCheck: MemberCheck = (v, loc, issues) => {
  if (absent(v)) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be an object or null', type: 'model_type' });
  const { value, operation, aggregation = 'average' } = v;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 5)
    issues.push({ loc: [...loc, 'value'], msg: 'Input should be a number from 0 to 5', type: 'value_error' });
  if (typeof operation !== 'string' || !(REMI_OPERATIONS as readonly string[]).includes(operation))
    issues.push({ loc: [...loc, 'operation'], msg: `Input should be ${quoted(REMI_OPERATIONS)}`, type: 'enum' });
  if (typeof aggregation !== 'string' || !(REMI_AGGREGATIONS as readonly string[]).includes(aggregation))
    issues.push({ loc: [...loc, 'aggregation'], msg: `Input should be ${quoted(REMI_AGGREGATIONS)}`, type: 'enum' });
};

const remiPaginationCheck: MemberCheck = (v, loc, issues) => {
  if (absent(v)) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be an object', type: 'model_type' });
  const l = v['limit'];
  if (l !== undefined && (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > REMI_QUERY_LIMITS.pageSize))
    issues.push({ loc: [...loc, 'limit'], msg: `Input should be an integer from 1 to ${REMI_QUERY_LIMITS.pageSize}`, type: 'value_error' });
  const after = v['starting_after'];
  if (!absent(after) && (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0))
    issues.push({ loc: [...loc, 'starting_after'], msg: 'Input should be a record id', type: 'int_type' });
};

/** Query Rag Requests By Scores (spec 4.4, docs/remi.md): scored `/ask` requests of one UTC month, filtered, in id order. */
export class RemiQueryBody {
  @ApiProperty({ example: '2026-11', pattern: YEAR_MONTH.source, description: 'The UTC month, YYYY-MM.' })
  @Check(
    whenAbsent((v, loc, issues) => {
      if (v === undefined) issues.push({ loc, msg: 'Field required', type: 'missing' });
      else if (typeof v !== 'string' || !YEAR_MONTH.test(v))
        issues.push({ loc, msg: 'Input should be a month, YYYY-MM', type: 'string_pattern_mismatch' });
    }),
  )
  month!: string;

  @ApiPropertyOptional({
    type: () => RemiContextRelevanceFilter,
    nullable: true,
    description: "Compared with the aggregate of the request's context relevance scores.",
  })
  @Check(contextRelevanceCheck)
  context_relevance?: RemiContextRelevanceFilter | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true, description: "The answer's feedback." })
  @Check((v, loc, issues) => {
    if (!absent(v) && typeof v !== 'boolean') issues.push({ loc, msg: 'Input should be a valid boolean or null', type: 'bool_type' });
  })
  feedback_good?: boolean | null;

  @ApiPropertyOptional({ enum: REMI_STATUSES, nullable: true })
  @Check((v, loc, issues) => {
    if (!absent(v) && (typeof v !== 'string' || !(REMI_STATUSES as readonly string[]).includes(v)))
      issues.push({ loc, msg: `Input should be ${quoted(REMI_STATUSES)} or null`, type: 'enum' });
  })
  status?: RemiStatus | null;

  @ApiPropertyOptional({ type: () => RemiPagination, nullable: true })
  @Check(remiPaginationCheck)
  pagination?: RemiPagination | null;
}

/** Query Rag Requests By Scores on the bus: the KB and the body the gateway checked. */
export class RemiQueryRequest {
  @Check(checks.string({ required: true, max: 100 })) kbid!: string;
  @Check(nestedCheck(RemiQueryBody)) body!: RemiQueryBody;
}
