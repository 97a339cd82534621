import {
  ACTIVITY_EXPORT_MEMBERS,
  ACTIVITY_MEMBERS,
  activityMembersOf,
  activityPageSize,
  AUDIT_METADATA_PREFIX,
  defaultActivityShow,
  isActivityMember,
  type ActivityComparison,
  type ActivityMemberKind,
  type ActivityMetadataComparison,
  type ActivityQueryBody,
  type ActivityShown,
  type AuditEventType,
} from '@kb/contracts';
import { monthRange } from '../audit/partitions';
import { MEMBER_SQL } from './activity-members';

const SQL_OPS: Record<string, string> = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' };

export interface ShownColumn {
  /** Member name in the record (`audit_metadata.<key>` for one metadata key). */
  name: ActivityShown;
  kind: ActivityMemberKind;
  sql: string;
}

export interface ActivityQuery {
  type: AuditEventType;
  month: string;
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
 * The SQL of a Query Knowledgebox Activity Logs request (spec 4.4, API-MAP §1.4) whose body the
 * contract checked (`activityBodyOf(type)`: at the gateway and on the bus), over the members'
 * SQL. `kbid`, event type and month bounds take the first four parameters.
 */
export function activityQuerySql(kbid: string, type: AuditEventType, body: ActivityQueryBody): ActivityQuery {
  const month = body.year_month;
  const params = new Params([kbid, type, ...monthRange(month)]);
  const columns = shownColumns(body.show, type, params);
  const where: string[] = [];
  for (const [name, f] of Object.entries(body.filters)) {
    if (f === null || f === undefined || !isActivityMember(name)) continue;
    if (name === 'audit_metadata') {
      for (const { key, ...ops } of f as ActivityMetadataComparison[])
        comparison(`(e.audit_metadata ->> ${params.add(key)}::text)`, 'string', ops, params, where);
    } else comparison(MEMBER_SQL[name], ACTIVITY_MEMBERS[name].kind, f as ActivityComparison, params, where);
  }
  const p = body.pagination;
  let descending = false;
  if (p?.starting_after !== undefined && p.starting_after !== null) where.push(`e.id > ${params.add(p.starting_after)}::bigint`);
  else if (p?.ending_before !== undefined && p.ending_before !== null) {
    where.push(`e.id < ${params.add(p.ending_before)}::bigint`);
    descending = true;
  }
  return { type, month, columns, sql: where.join(' AND '), params: params.values, descending, limit: activityPageSize(p) };
}

/** The shown members: as asked, the type's default when none, id and date always (first). */
export function shownColumns(show: ActivityQueryBody['show'], type: AuditEventType, params?: Params): ShownColumn[] {
  const names: ActivityShown[] =
    show === 'all'
      ? activityMembersOf(type).filter((n) => !ACTIVITY_EXPORT_MEMBERS.has(n))
      : !show || show.length === 0
        ? defaultActivityShow(type)
        : (show as ActivityShown[]);
  // Pagination needs the id, and a record without its date says little: both are always there.
  const all: ActivityShown[] = ['id', 'date', ...names.filter((n) => n !== 'id' && n !== 'date')];
  const bound = params ?? new Params([]);
  return all.map((name) => {
    if (isActivityMember(name)) return { name, kind: ACTIVITY_MEMBERS[name].kind, sql: MEMBER_SQL[name] };
    return { name, kind: 'json' as const, sql: `(e.audit_metadata -> ${bound.add(name.slice(AUDIT_METADATA_PREFIX.length))}::text)` };
  });
}

/** One comparison (`{eq, gt, ge, lt, le, ne, isnull}` and for strings `like`, `ilike`) as conditions. */
function comparison(sql: string, kind: ActivityMemberKind, ops: ActivityComparison, params: Params, where: string[]): void {
  for (const [op, value] of Object.entries(ops) as [string, unknown][]) {
    if (value === null || value === undefined) continue;
    if (op === 'isnull') {
      where.push(`${sql} IS ${value ? '' : 'NOT '}NULL`);
      continue;
    }
    const pattern = op === 'like' || op === 'ilike';
    // (the contract allows no other operator; none other ever reaches SQL)
    if (!pattern && op !== 'ne' && !SQL_OPS[op]) continue;
    const cast = kind === 'int' ? 'numeric' : kind === 'bool' ? 'boolean' : 'text';
    const p = `${params.add(pattern ? likePattern(value as string) : value)}::${cast}`;
    const subject = kind === 'string' && SQL_OPS[op] && op !== 'eq' ? `${sql} COLLATE "C"` : sql;
    if (op === 'ne') where.push(`${sql} IS DISTINCT FROM ${p}`);
    else if (pattern) where.push(`${sql} ${op === 'like' ? 'LIKE' : 'ILIKE'} ${p} ESCAPE '\\'`);
    else where.push(`${subject} ${SQL_OPS[op]} ${p}`);
  }
}
