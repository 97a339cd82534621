import {
  DomainError,
  REMI_QUERY_LIMITS,
  type RemiAggregation,
  type RemiOperation,
  type RemiQueryBody,
  type RemiStatus,
  type ValidationIssue,
} from '@kb/contracts';
import { monthRange } from '../audit/partitions';

/** The SQL comparison of each operation, and the column of each aggregation of the context relevance scores. */
const REMI_SQL_OPERATIONS: Record<RemiOperation, string> = { gt: '>', ge: '>=', lt: '<', le: '<=', eq: '=' };
const REMI_AGGREGATION_COLUMNS: Record<RemiAggregation, string> = { average: 'context_avg', min: 'context_min', max: 'context_max' };
/** Bucket sizes, the same enum as Get Usage (shortest bucket length, so that the bound on their number is never exceeded). */
export const TIME_AGGREGATIONS: Record<string, number> = {
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 28 * 86_400_000,
  quarter: 89 * 86_400_000,
  year: 365 * 86_400_000,
  millennium: 365_000 * 86_400_000,
};

export interface RemiQuery {
  from: string;
  to: string;
  context?: { column: string; op: string; value: number };
  feedbackGood?: boolean;
  status?: RemiStatus;
  limit: number;
  startingAfter?: number;
}

/** What a Query Rag Requests By Scores body (checked by its contract at the gateway and on the bus) asks for. */
export function remiQueryOf(body: RemiQueryBody): RemiQuery {
  const [from, to] = monthRange(body.month);
  const cr = body.context_relevance;
  const after = body.pagination?.starting_after;
  return {
    from,
    to,
    ...(cr
      ? {
          context: {
            column: REMI_AGGREGATION_COLUMNS[cr.aggregation ?? 'average'],
            op: REMI_SQL_OPERATIONS[cr.operation],
            value: cr.value,
          },
        }
      : {}),
    ...(typeof body.feedback_good === 'boolean' ? { feedbackGood: body.feedback_good } : {}),
    ...(body.status ? { status: body.status } : {}),
    limit: body.pagination?.limit ?? REMI_QUERY_LIMITS.defaultPageSize,
    ...(after !== undefined && after !== null ? { startingAfter: after } : {}),
  };
}

export interface RemiRange {
  aggregation: string;
  from: string;
  to: string;
}

/** Reads the query of Aggregated Remi Scores Across Time: `from` required, `to` defaults to now, at most 1000 buckets. */
export function parseRemiRange(
  aggregation: string | undefined,
  from: string | undefined,
  to: string | undefined,
  now = new Date(),
): RemiRange {
  const issues: ValidationIssue[] = [];
  const issue = (loc: string, msg: string, type = 'value_error') => void issues.push({ loc: ['query', loc], msg, type });
  const agg = aggregation ?? 'day';
  if (!(agg in TIME_AGGREGATIONS))
    issue(
      'aggregation',
      `Input should be ${Object.keys(TIME_AGGREGATIONS)
        .map((a) => `'${a}'`)
        .join(', ')}`,
      'enum',
    );
  const date = (s: string | undefined, name: string): Date | undefined => {
    if (s === undefined) return undefined;
    const d = new Date(s);
    if (!/^\d{4}-\d{2}-\d{2}/.test(s) || Number.isNaN(d.getTime())) {
      issue(name, 'Input should be a valid datetime', 'datetime_parsing');
      return undefined;
    }
    return d;
  };
  if (from === undefined) issue('from', 'Field required', 'missing');
  const f = date(from, 'from');
  const t = to === undefined ? now : date(to, 'to');
  if (f && t && f.getTime() >= t.getTime()) issue('to', 'Input should be after from', 'value_error');
  const size = TIME_AGGREGATIONS[agg];
  if (f && t && size && (t.getTime() - f.getTime()) / size > REMI_QUERY_LIMITS.buckets) {
    issue(
      'from',
      `The range holds more than ${REMI_QUERY_LIMITS.buckets} ${agg} buckets: narrow it or aggregate by a longer period`,
      'value_error',
    );
  }
  if (issues.length > 0) throw DomainError.validation(issues);
  return { aggregation: agg, from: (f as Date).toISOString(), to: (t as Date).toISOString() };
}
