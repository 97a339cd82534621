import { DomainError, type ValidationIssue } from '@kb/contracts';
import { monthRange } from '../audit/partitions';

/** Bounds of the REMi routes (beyond them: 422). */
export const REMI_QUERY_LIMITS = {
  /** Records per page of Query Rag Requests By Scores. */
  pageSize: 100,
  defaultPageSize: 20,
  /** Time buckets of one Aggregated Remi Scores Across Time answer. */
  buckets: 1000,
} as const;

export const REMI_STATUSES = ['SUCCESS', 'ERROR', 'NO_CONTEXT'] as const;
export const REMI_OPERATIONS = { gt: '>', ge: '>=', lt: '<', le: '<=', eq: '=' } as const;
export const REMI_AGGREGATIONS = { average: 'context_avg', min: 'context_min', max: 'context_max' } as const;
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

const YEAR_MONTH = /^\d{4}-(0[1-9]|1[012])$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface RemiQuery {
  from: string;
  to: string;
  context?: { column: string; op: string; value: number };
  feedbackGood?: boolean;
  status?: string;
  limit: number;
  startingAfter?: number;
}

/** Reads a Query Rag Requests By Scores body, reporting every bad member at once. */
export function parseRemiQuery(body: unknown): RemiQuery {
  const issues: ValidationIssue[] = [];
  const issue = (loc: (string | number)[], msg: string, type = 'value_error') => void issues.push({ loc: ['body', ...loc], msg, type });
  const b = isObject(body) ? body : {};
  if (!isObject(body)) issue([], 'Input should be an object', 'model_type');
  const month = b['month'];
  if (month === undefined) issue(['month'], 'Field required', 'missing');
  else if (typeof month !== 'string' || !YEAR_MONTH.test(month))
    issue(['month'], 'Input should be a month, YYYY-MM', 'string_pattern_mismatch');
  const q: RemiQuery = { from: '', to: '', limit: REMI_QUERY_LIMITS.defaultPageSize };
  const cr = b['context_relevance'];
  if (cr !== undefined && cr !== null) {
    if (!isObject(cr)) issue(['context_relevance'], 'Input should be an object or null', 'model_type');
    else {
      const { value, operation, aggregation = 'average' } = cr as { value?: unknown; operation?: unknown; aggregation?: unknown };
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 5)
        issue(['context_relevance', 'value'], 'Input should be a number from 0 to 5', 'value_error');
      if (typeof operation !== 'string' || !(operation in REMI_OPERATIONS))
        issue(
          ['context_relevance', 'operation'],
          `Input should be ${Object.keys(REMI_OPERATIONS)
            .map((o) => `'${o}'`)
            .join(', ')}`,
          'enum',
        );
      if (typeof aggregation !== 'string' || !(aggregation in REMI_AGGREGATIONS))
        issue(
          ['context_relevance', 'aggregation'],
          `Input should be ${Object.keys(REMI_AGGREGATIONS)
            .map((o) => `'${o}'`)
            .join(', ')}`,
          'enum',
        );
      if (
        typeof value === 'number' &&
        typeof operation === 'string' &&
        operation in REMI_OPERATIONS &&
        typeof aggregation === 'string' &&
        aggregation in REMI_AGGREGATIONS
      ) {
        q.context = {
          column: REMI_AGGREGATIONS[aggregation as keyof typeof REMI_AGGREGATIONS],
          op: REMI_OPERATIONS[operation as keyof typeof REMI_OPERATIONS],
          value,
        };
      }
    }
  }
  const fg = b['feedback_good'];
  if (fg !== undefined && fg !== null) {
    if (typeof fg !== 'boolean') issue(['feedback_good'], 'Input should be a valid boolean or null', 'bool_type');
    else q.feedbackGood = fg;
  }
  const status = b['status'];
  if (status !== undefined && status !== null) {
    if (typeof status !== 'string' || !(REMI_STATUSES as readonly string[]).includes(status))
      issue(['status'], `Input should be ${REMI_STATUSES.map((s) => `'${s}'`).join(', ')} or null`, 'enum');
    else q.status = status;
  }
  const p = b['pagination'];
  if (p !== undefined && p !== null) {
    if (!isObject(p)) issue(['pagination'], 'Input should be an object', 'model_type');
    else {
      if (p['limit'] !== undefined) {
        const l = p['limit'];
        if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > REMI_QUERY_LIMITS.pageSize)
          issue(['pagination', 'limit'], `Input should be an integer from 1 to ${REMI_QUERY_LIMITS.pageSize}`, 'value_error');
        else q.limit = l;
      }
      const after = p['starting_after'];
      if (after !== undefined && after !== null) {
        if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0)
          issue(['pagination', 'starting_after'], 'Input should be a record id', 'int_type');
        else q.startingAfter = after;
      }
    }
  }
  if (issues.length > 0) throw DomainError.validation(issues);
  [q.from, q.to] = monthRange(month as string);
  return q;
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
