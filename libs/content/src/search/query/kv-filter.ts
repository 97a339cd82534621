import type { FilterExpressionOf, KvCondition } from '@kb/contracts';
import type { SqlParams } from './sql';

/**
 * The `key_value` member of a filter_expression (API-MAP 2.1) as SQL over `content.fields`: a
 * resource (its id at `rid`) matches a condition when its key_value field `schema_id` holds `key`
 * with a value that is equal (`eq`; a range holding it), within `gte`/`lte` (numbers or dates; a
 * range overlapping them) or containing `contains` (text, case-insensitive). The expression was
 * checked by its DTO (checkKvExpression). Every cast sits in a CASE on the value's JSON type, so a
 * value of another type does not match (and never fails the statement).
 */
export function kvExpressionSql(params: SqlParams, rid: string, e: FilterExpressionOf<KvCondition>): string {
  if ('and' in e) return `(${e.and.map((x) => kvExpressionSql(params, rid, x)).join(' AND ')})`;
  if ('or' in e) return `(${e.or.map((x) => kvExpressionSql(params, rid, x)).join(' OR ')})`;
  if ('not' in e) return `NOT (${kvExpressionSql(params, rid, e.not)})`;
  const v = `(kf.value->'values'->${params.add(e.key)}::text)`;
  const cond = valueCondition(params, v, e);
  return `EXISTS (SELECT 1 FROM content.fields kf WHERE kf.rid = ${rid} AND kf.field_type = 'key_value' AND kf.field_id = ${params.add(e.schema_id)}::text AND ${cond})`;
}

const ISO_PREFIX = /^\d{4}-\d{2}-\d{2}/;

/** A bound as the stored form compares it: a number, or a date as the ISO text dates are stored in. */
function bound(x: number | string): { kind: 'number' | 'date'; value: number | string } {
  return typeof x === 'number' ? { kind: 'number', value: x } : { kind: 'date', value: new Date(x).toISOString() };
}

/** `op` between the JSON value `j` and a bound, false for a value of another type. */
function compare(params: SqlParams, j: string, op: '>=' | '<=', b: { kind: 'number' | 'date'; value: number | string }): string {
  if (b.kind === 'number')
    return `CASE WHEN jsonb_typeof(${j}) = 'number' THEN (${j})::numeric ${op} ${params.add(b.value)}::numeric ELSE FALSE END`;
  return `CASE WHEN jsonb_typeof(${j}) = 'string' AND (${j} #>> '{}') ~ '^\\d{4}-\\d{2}-\\d{2}T' THEN (${j} #>> '{}') ${op} ${params.add(b.value)}::text ELSE FALSE END`;
}

/** A range value `{from, to}` of the bound's type. */
const isRangeSql = (v: string): string => `jsonb_typeof(${v}) = 'object'`;

function valueCondition(params: SqlParams, v: string, e: KvCondition): string {
  if ('contains' in e && e.contains !== undefined)
    return `CASE WHEN jsonb_typeof(${v}) = 'string' THEN strpos(lower(${v} #>> '{}'), lower(${params.add(e.contains)}::text)) > 0 ELSE FALSE END`;
  if ('eq' in e && e.eq !== undefined) {
    const alternatives = [`${v} = ${params.add(JSON.stringify(e.eq))}::jsonb`];
    const eq = e.eq;
    const asDate = typeof eq === 'string' && ISO_PREFIX.test(eq) && !Number.isNaN(new Date(eq).getTime());
    if (asDate) alternatives.push(`${v} = to_jsonb(${params.add(new Date(eq).toISOString())}::text)`);
    if (typeof eq === 'number' || asDate) {
      const b = bound(eq as number | string);
      alternatives.push(`(${isRangeSql(v)} AND ${compare(params, `${v}->'from'`, '<=', b)} AND ${compare(params, `${v}->'to'`, '>=', b)})`);
    }
    return `(${alternatives.join(' OR ')})`;
  }
  const r = e as { gte?: number | string; lte?: number | string };
  const scalar: string[] = [];
  const range: string[] = [isRangeSql(v)];
  if (r.gte !== undefined && r.gte !== null) {
    const b = bound(r.gte);
    scalar.push(compare(params, v, '>=', b));
    range.push(compare(params, `${v}->'to'`, '>=', b));
  }
  if (r.lte !== undefined && r.lte !== null) {
    const b = bound(r.lte);
    scalar.push(compare(params, v, '<=', b));
    range.push(compare(params, `${v}->'from'`, '<=', b));
  }
  return `((${scalar.join(' AND ')}) OR (${range.join(' AND ')}))`;
}
