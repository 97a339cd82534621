import { AuditEventTypes, DomainError, type AuditEventType, type ValidationIssue } from '@kb/contracts';
import { monthRange } from '../audit/partitions';
import { defaultShow, EXPORT_MEMBERS, MEMBERS, membersOf, type Member } from './activity-members';

/** Bounds on a query, so that one request cannot become an expensive statement (beyond them: 422). */
export const ACTIVITY_LIMITS = {
  /** Comparisons in `filters`, all members together (each operator counts). */
  comparisons: 20,
  /** Entries of `filters.audit_metadata`. */
  metadataFilters: 10,
  /** Members in `show`. */
  show: 60,
  /** Characters of a compared string value. */
  valueChars: 1000,
  /** Characters of a like/ilike pattern. */
  patternChars: 200,
  /** Characters of an audit_metadata key. */
  keyChars: 100,
  /** Records per page. */
  pageSize: 1000,
} as const;

const OPERATORS = ['eq', 'gt', 'ge', 'lt', 'le', 'ne', 'isnull'] as const;
const PATTERNS = ['like', 'ilike'] as const;
const SQL_OPS: Record<string, string> = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' };
const YEAR_MONTH = /^\d{4}-(0[1-9]|1[012])$/;

type Loc = (string | number)[];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ShownColumn {
  /** Member name in the record (`audit_metadata.<key>` for one metadata key). */
  name: string;
  kind: Member['kind'];
  sql: string;
}

export interface ActivityQuery {
  type: AuditEventType;
  columns: ShownColumn[];
  /** Conditions after kbid, type and month, with their bound values. */
  sql: string;
  params: unknown[];
  /** `ending_before` reads backwards (descending), and the page is then turned round. */
  descending: boolean;
  limit: number;
}

/** Builds `$n` placeholders; values only ever travel as parameters. */
class Params {
  readonly values: unknown[];
  constructor(initial: unknown[]) {
    this.values = [...initial];
  }
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/**
 * A LIKE pattern as the user wrote it: `%` and `_` are wildcards and a backslash takes the next
 * character literally (`ESCAPE '\'`, whatever the server's settings). A pattern ending in a lone
 * backslash would be an SQL error: that backslash is taken literally instead.
 */
export function likePattern(pattern: string): string {
  const trailing = /\\*$/.exec(pattern)?.[0].length ?? 0;
  return trailing % 2 === 1 ? `${pattern}\\` : pattern;
}

/**
 * Reads a Query Knowledgebox Activity Logs request (spec 4.4, API-MAP §1.4), reporting every
 * invalid member at once in the spec's 422 shape, and turns it into SQL over the members' allow-list.
 * `kbid`, event type and month bounds take the first four parameters.
 */
export function parseActivityQuery(kbid: string, eventType: string, body: unknown): ActivityQuery & { month: string } {
  const issues: ValidationIssue[] = [];
  const issue = (loc: Loc, msg: string, type = 'value_error'): void => void issues.push({ loc, msg, type });
  const type = eventType.toLowerCase() as AuditEventType;
  if (!AuditEventTypes.includes(type))
    issue(['path', 'event_type'], `Input should be ${AuditEventTypes.map((t) => `'${t}'`).join(', ')}`, 'enum');
  const known = new Set(AuditEventTypes.includes(type) ? membersOf(type) : Object.keys(MEMBERS));
  const b: Record<string, unknown> = isObject(body) ? body : {};
  if (!isObject(body)) issue(['body'], 'Input should be a valid object', 'model_type');
  for (const k of Object.keys(b))
    if (!['year_month', 'show', 'filters', 'pagination'].includes(k))
      issue(['body', k], 'Extra inputs are not permitted', 'extra_forbidden');

  const ym = b['year_month'];
  let month = '1970-01';
  if (ym === undefined || ym === null) issue(['body', 'year_month'], 'Field required', 'missing');
  else if (typeof ym !== 'string' || !YEAR_MONTH.test(ym))
    issue(['body', 'year_month'], 'year_month must be in the format YYYY-MM', 'value_error');
  // Months outside 1970-9998 hold no events, and their bounds would not be plain ISO instants.
  else if (Number(ym.slice(0, 4)) < 1970 || Number(ym.slice(0, 4)) > 9998)
    issue(['body', 'year_month'], 'year_month must be between 1970-01 and 9998-12', 'value_error');
  else month = ym;

  const params = new Params([kbid, type, ...monthRange(month)]);
  const columns = readShow(b['show'], type, known, params, issue);
  const where: string[] = [];
  readFilters(b['filters'], known, params, where, issue);

  const p = b['pagination'];
  let limit = 10;
  let descending = false;
  if (p !== undefined && p !== null) {
    if (!isObject(p)) issue(['body', 'pagination'], 'Input should be a valid object', 'model_type');
    else {
      for (const k of Object.keys(p))
        if (!['limit', 'starting_after', 'ending_before'].includes(k))
          issue(['body', 'pagination', k], 'Extra inputs are not permitted', 'extra_forbidden');
      const l = p['limit'];
      if (l !== undefined && l !== null) {
        if (!Number.isInteger(l)) issue(['body', 'pagination', 'limit'], 'Input should be a valid integer', 'int_type');
        else if ((l as number) < 0)
          issue(['body', 'pagination', 'limit'], 'Input should be greater than or equal to 0', 'greater_than_equal');
        else if ((l as number) > ACTIVITY_LIMITS.pageSize)
          issue(['body', 'pagination', 'limit'], `Input should be less than or equal to ${ACTIVITY_LIMITS.pageSize}`, 'less_than_equal');
        else limit = l as number;
      }
      const after = cursor(p['starting_after'], ['body', 'pagination', 'starting_after'], issue);
      const before = cursor(p['ending_before'], ['body', 'pagination', 'ending_before'], issue);
      if (after !== undefined && before !== undefined)
        issue(['body', 'pagination'], 'Send starting_after or ending_before, not both', 'value_error');
      else if (after !== undefined) where.push(`e.id > ${params.add(after)}::bigint`);
      else if (before !== undefined) {
        where.push(`e.id < ${params.add(before)}::bigint`);
        descending = true;
      }
    }
  }
  if (issues.length > 0) throw DomainError.validation(issues);
  return { type, month, columns, sql: where.join(' AND '), params: params.values, descending, limit };
}

function cursor(v: unknown, loc: Loc, issue: (loc: Loc, msg: string, type?: string) => void): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Number.isSafeInteger(v) || (v as number) < 0) {
    issue(loc, 'Input should be a valid non-negative integer', 'int_type');
    return undefined;
  }
  return v as number;
}

function readShow(
  v: unknown,
  type: AuditEventType,
  known: Set<string>,
  params: Params,
  issue: (loc: Loc, msg: string, type?: string) => void,
): ShownColumn[] {
  let names: string[];
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0))
    names = AuditEventTypes.includes(type) ? defaultShow(type) : ['id', 'date'];
  else if (v === 'all') names = [...known].filter((n) => !EXPORT_MEMBERS.has(n));
  else if (!Array.isArray(v)) {
    issue(['body', 'show'], "Input should be a valid list or 'all'", 'list_type');
    names = [];
  } else if (v.length > ACTIVITY_LIMITS.show) {
    issue(['body', 'show'], `List should have at most ${ACTIVITY_LIMITS.show} items`, 'too_long');
    names = [];
  } else {
    names = [];
    v.forEach((item, i) => {
      if (typeof item !== 'string') issue(['body', 'show', i], 'Input should be a valid string', 'string_type');
      else if (
        item.startsWith('audit_metadata.') &&
        item.length > 'audit_metadata.'.length &&
        item.length <= 'audit_metadata.'.length + ACTIVITY_LIMITS.keyChars
      )
        names.push(item);
      else if (!known.has(item))
        issue(['body', 'show', i], `${item} is not a field. List of fields: ${[...known].join(', ')}`, 'value_error');
      else if (names.includes(item)) issue(['body', 'show', i], 'Set items should be unique', 'unique');
      else names.push(item);
    });
  }
  // Pagination needs the id, and a record without its date says little: both are always there.
  const all = ['id', 'date', ...names.filter((n) => n !== 'id' && n !== 'date')];
  return all.map((name) => {
    if (name.startsWith('audit_metadata.'))
      return { name, kind: 'json' as const, sql: `(e.audit_metadata -> ${params.add(name.slice('audit_metadata.'.length))}::text)` };
    const m = MEMBERS[name] as Member;
    return { name, kind: m.kind, sql: m.sql };
  });
}

function readFilters(
  v: unknown,
  known: Set<string>,
  params: Params,
  where: string[],
  issue: (loc: Loc, msg: string, type?: string) => void,
): void {
  const loc: Loc = ['body', 'filters'];
  if (v === undefined || v === null) {
    issue(loc, 'Field required', 'missing');
    return;
  }
  if (!isObject(v)) {
    issue(loc, 'Input should be a valid object', 'model_type');
    return;
  }
  let comparisons = 0;
  for (const [name, f] of Object.entries(v)) {
    const member = MEMBERS[name];
    if (!member || !known.has(name)) {
      issue([...loc, name], 'Extra inputs are not permitted', 'extra_forbidden');
      continue;
    }
    if (!member.filterable) {
      issue([...loc, name], `${name} can be shown, not filtered`, 'value_error');
      continue;
    }
    if (f === null || f === undefined) continue;
    if (name === 'audit_metadata') {
      if (!Array.isArray(f)) {
        issue([...loc, name], 'Input should be a valid list', 'list_type');
        continue;
      }
      if (f.length > ACTIVITY_LIMITS.metadataFilters) {
        issue([...loc, name], `List should have at most ${ACTIVITY_LIMITS.metadataFilters} items`, 'too_long');
        continue;
      }
      f.forEach((entry, i) => {
        const eloc = [...loc, name, i];
        if (!isObject(entry)) return issue(eloc, 'Input should be a valid object', 'model_type');
        const key = entry['key'];
        if (typeof key !== 'string' || key === '') return issue([...eloc, 'key'], 'Field required', 'missing');
        if (key.length > ACTIVITY_LIMITS.keyChars)
          return issue([...eloc, 'key'], `String should have at most ${ACTIVITY_LIMITS.keyChars} characters`, 'string_too_long');
        const { key: _key, ...ops } = entry;
        comparisons += comparison(`(e.audit_metadata ->> ${params.add(key)}::text)`, 'string', ops, eloc, params, where, issue);
      });
      continue;
    }
    if (!isObject(f)) {
      issue([...loc, name], 'Input should be a valid object', 'model_type');
      continue;
    }
    comparisons += comparison(member.sql, member.kind, f, [...loc, name], params, where, issue);
  }
  if (comparisons > ACTIVITY_LIMITS.comparisons) issue(loc, `At most ${ACTIVITY_LIMITS.comparisons} comparisons may be sent`, 'too_long');
}

/** One comparison object (`{eq, gt, ge, lt, le, ne, isnull}` and for strings `like`, `ilike`); returns how many it holds. */
function comparison(
  sql: string,
  kind: Member['kind'],
  ops: Record<string, unknown>,
  loc: Loc,
  params: Params,
  where: string[],
  issue: (loc: Loc, msg: string, type?: string) => void,
): number {
  let n = 0;
  for (const [op, value] of Object.entries(ops)) {
    const oloc = [...loc, op];
    const allowed: readonly string[] =
      kind === 'string' ? [...OPERATORS, ...PATTERNS] : kind === 'bool' ? ['eq', 'ne', 'isnull'] : OPERATORS;
    if (!allowed.includes(op)) {
      issue(oloc, 'Extra inputs are not permitted', 'extra_forbidden');
      continue;
    }
    if (value === null || value === undefined) continue;
    n += 1;
    if (op === 'isnull') {
      if (typeof value !== 'boolean') issue(oloc, 'Input should be a valid boolean', 'bool_type');
      else where.push(`${sql} IS ${value ? '' : 'NOT '}NULL`);
      continue;
    }
    const bound = typed(kind, op, value, oloc, issue);
    if (bound === undefined) continue;
    const p = `${params.add(bound.value)}::${bound.cast}`;
    const subject = kind === 'string' && SQL_OPS[op] && op !== 'eq' ? `${sql} COLLATE "C"` : sql;
    if (op === 'ne') where.push(`${sql} IS DISTINCT FROM ${p}`);
    else if (op === 'like' || op === 'ilike') where.push(`${sql} ${op === 'like' ? 'LIKE' : 'ILIKE'} ${p} ESCAPE '\\'`);
    else where.push(`${subject} ${SQL_OPS[op]} ${p}`);
  }
  return n;
}

function typed(
  kind: Member['kind'],
  op: string,
  value: unknown,
  loc: Loc,
  issue: (loc: Loc, msg: string, type?: string) => void,
): { value: unknown; cast: string } | undefined {
  if (kind === 'int') {
    if (!Number.isSafeInteger(value)) return void issue(loc, 'Input should be a valid integer', 'int_type');
    return { value, cast: 'numeric' };
  }
  if (kind === 'bool') {
    if (typeof value !== 'boolean') return void issue(loc, 'Input should be a valid boolean', 'bool_type');
    return { value, cast: 'boolean' };
  }
  if (typeof value !== 'string') return void issue(loc, 'Input should be a valid string', 'string_type');
  const max = op === 'like' || op === 'ilike' ? ACTIVITY_LIMITS.patternChars : ACTIVITY_LIMITS.valueChars;
  if (value.length > max) return void issue(loc, `String should have at most ${max} characters`, 'string_too_long');
  return { value: op === 'like' || op === 'ilike' ? likePattern(value) : value, cast: 'text' };
}
