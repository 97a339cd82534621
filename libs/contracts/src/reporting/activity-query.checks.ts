import { checks, isPlainObject, whenAbsent, type Loc, type MemberCheck } from '../common/member-checks';
import type { ValidationIssue } from '../common/errors';
import {
  ACTIVITY_MEMBERS,
  AUDIT_METADATA_PREFIX,
  isActivityMember,
  type ActivityMember,
  type ActivityMemberKind,
} from './activity-members';

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
  /** Records per page when `limit` is not given. */
  defaultPageSize: 10,
} as const;

export const ACTIVITY_OPERATORS = ['eq', 'gt', 'ge', 'lt', 'le', 'ne', 'isnull'] as const;
export const ACTIVITY_PATTERNS = ['like', 'ilike'] as const;
export type ActivityOperator = (typeof ACTIVITY_OPERATORS)[number] | (typeof ACTIVITY_PATTERNS)[number];
export const YEAR_MONTH = /^\d{4}-(0[1-9]|1[012])$/;

// ---- The checks (every problem at once, with the messages clients know) -------------------------

export const absent = (v: unknown): boolean => v === undefined || v === null;

export const yearMonthCheck: MemberCheck = whenAbsent((v, loc, issues) => {
  if (absent(v)) issues.push({ loc, msg: 'Field required', type: 'missing' });
  else if (typeof v !== 'string' || !YEAR_MONTH.test(v))
    issues.push({ loc, msg: 'year_month must be in the format YYYY-MM', type: 'value_error' });
  // Months outside 1970-9998 hold no events, and their bounds would not be plain ISO instants.
  else if (Number(v.slice(0, 4)) < 1970 || Number(v.slice(0, 4)) > 9998)
    issues.push({ loc, msg: 'year_month must be between 1970-01 and 9998-12', type: 'value_error' });
});

export function showCheck(known: readonly ActivityMember[]): MemberCheck {
  return (v, loc, issues) => {
    if (absent(v) || v === 'all') return;
    if (!Array.isArray(v)) return void issues.push({ loc, msg: "Input should be a valid list or 'all'", type: 'list_type' });
    if (v.length > ACTIVITY_LIMITS.show)
      return void issues.push({ loc, msg: `List should have at most ${ACTIVITY_LIMITS.show} items`, type: 'too_long' });
    const names: string[] = [];
    v.forEach((item: unknown, i) => {
      if (typeof item !== 'string') issues.push({ loc: [...loc, i], msg: 'Input should be a valid string', type: 'string_type' });
      else if (
        item.startsWith(AUDIT_METADATA_PREFIX) &&
        item.length > AUDIT_METADATA_PREFIX.length &&
        item.length <= AUDIT_METADATA_PREFIX.length + ACTIVITY_LIMITS.keyChars
      )
        names.push(item);
      else if (!(known as readonly string[]).includes(item))
        issues.push({ loc: [...loc, i], msg: `${item} is not a field. List of fields: ${known.join(', ')}`, type: 'value_error' });
      else if (names.includes(item)) issues.push({ loc: [...loc, i], msg: 'Set items should be unique', type: 'unique' });
      else names.push(item);
    });
  };
}

export function filtersCheck(known: readonly ActivityMember[]): MemberCheck {
  return whenAbsent((v, loc, issues) => {
    if (absent(v)) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
    let comparisons = 0;
    for (const [name, f] of Object.entries(v)) {
      const at = [...loc, name];
      if (!isActivityMember(name) || !known.includes(name)) {
        issues.push({ loc: at, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        continue;
      }
      const member = ACTIVITY_MEMBERS[name];
      if (!member.filterable) {
        issues.push({ loc: at, msg: `${name} can be shown, not filtered`, type: 'value_error' });
        continue;
      }
      if (absent(f)) continue;
      if (name === 'audit_metadata') {
        comparisons += metadataComparisons(f, at, issues);
        continue;
      }
      if (!isPlainObject(f)) {
        issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
        continue;
      }
      comparisons += comparisonIssues(member.kind, f, at, issues);
    }
    if (comparisons > ACTIVITY_LIMITS.comparisons)
      issues.push({ loc, msg: `At most ${ACTIVITY_LIMITS.comparisons} comparisons may be sent`, type: 'too_long' });
  });
}

function metadataComparisons(f: unknown, loc: Loc, issues: ValidationIssue[]): number {
  if (!Array.isArray(f)) return (void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' }), 0);
  if (f.length > ACTIVITY_LIMITS.metadataFilters)
    return (void issues.push({ loc, msg: `List should have at most ${ACTIVITY_LIMITS.metadataFilters} items`, type: 'too_long' }), 0);
  let n = 0;
  f.forEach((entry: unknown, i) => {
    const at = [...loc, i];
    if (!isPlainObject(entry)) return void issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
    const key = entry['key'];
    if (typeof key !== 'string' || key === '') return void issues.push({ loc: [...at, 'key'], msg: 'Field required', type: 'missing' });
    if (key.length > ACTIVITY_LIMITS.keyChars)
      return void issues.push({
        loc: [...at, 'key'],
        msg: `String should have at most ${ACTIVITY_LIMITS.keyChars} characters`,
        type: 'string_too_long',
      });
    const { key: _key, ...ops } = entry;
    n += comparisonIssues('string', ops, at, issues);
  });
  return n;
}

/** The operators a member of `kind` may be compared with. */
export function activityOperatorsOf(kind: ActivityMemberKind): readonly ActivityOperator[] {
  return kind === 'string' ? [...ACTIVITY_OPERATORS, ...ACTIVITY_PATTERNS] : kind === 'bool' ? ['eq', 'ne', 'isnull'] : ACTIVITY_OPERATORS;
}

/** One comparison object (`{eq, gt, ge, lt, le, ne, isnull}` and for strings `like`, `ilike`); returns how many it holds. */
function comparisonIssues(kind: ActivityMemberKind, ops: Record<string, unknown>, loc: Loc, issues: ValidationIssue[]): number {
  const allowed: readonly string[] = activityOperatorsOf(kind);
  let n = 0;
  for (const [op, value] of Object.entries(ops)) {
    const at = [...loc, op];
    if (!allowed.includes(op)) {
      issues.push({ loc: at, msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      continue;
    }
    if (absent(value)) continue;
    n += 1;
    if (op === 'isnull' || kind === 'bool') {
      if (typeof value !== 'boolean') issues.push({ loc: at, msg: 'Input should be a valid boolean', type: 'bool_type' });
    } else if (kind === 'int') {
      if (!Number.isSafeInteger(value)) issues.push({ loc: at, msg: 'Input should be a valid integer', type: 'int_type' });
    } else if (typeof value !== 'string') issues.push({ loc: at, msg: 'Input should be a valid string', type: 'string_type' });
    else {
      const max = op === 'like' || op === 'ilike' ? ACTIVITY_LIMITS.patternChars : ACTIVITY_LIMITS.valueChars;
      if (value.length > max) issues.push({ loc: at, msg: `String should have at most ${max} characters`, type: 'string_too_long' });
    }
  }
  return n;
}

function cursorCheck(v: unknown, loc: Loc, issues: ValidationIssue[]): boolean {
  if (absent(v)) return false;
  if (!Number.isSafeInteger(v) || (v as number) < 0) {
    issues.push({ loc, msg: 'Input should be a valid non-negative integer', type: 'int_type' });
    return false;
  }
  return true;
}

export const paginationCheck: MemberCheck = (v, loc, issues) => {
  if (absent(v)) return;
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  for (const k of Object.keys(v))
    if (!['limit', 'starting_after', 'ending_before'].includes(k))
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  checks.int(0, ACTIVITY_LIMITS.pageSize)(v['limit'], [...loc, 'limit'], issues, v);
  const after = cursorCheck(v['starting_after'], [...loc, 'starting_after'], issues);
  const before = cursorCheck(v['ending_before'], [...loc, 'ending_before'], issues);
  if (after && before) issues.push({ loc, msg: 'Send starting_after or ending_before, not both', type: 'value_error' });
};
