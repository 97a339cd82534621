import { ApiProperty } from '@nestjs/swagger';
import type { ValidationIssue } from '../common/errors';
import { Check, Closed, isPlainObject, type Loc, type MemberCheck } from '../common/member-checks';
import type { KvSchemaDto } from './kb-config.dto';

/**
 * The `key_value` field (API-MAP 3 "Fields", `k` in ids): named values, checked against the KB's
 * key-value schema of the same id when there is one (docs/key-value-fields.md).
 */
export const KV_LIMITS = {
  /** Keys of one field (a schema has at most as many). */
  keys: 50,
  /** Characters of a key (as a schema key: no `/` or `.`). */
  keyChars: 64,
  /** Characters of one text value. */
  textChars: 10_000,
  /** Characters of every text value of a field together. */
  totalChars: 100_000,
  /** Characters of a `contains` or text `eq` in a filter. */
  filterChars: 1_000,
} as const;

/** A key: 1–64 characters, no `/` or `.` (the same rule as schema keys). */
export const KV_KEY_PATTERN = /^[^/.]{1,64}$/;

/** A bounded range (integer, float or date keys whose schema says `range`). */
export interface KvRange {
  from: number | string;
  to: number | string;
}
export type KvValue = string | number | boolean | KvRange;

const isRange = (v: unknown): v is KvRange & Record<string, unknown> => isPlainObject(v) && 'from' in v && 'to' in v;
const isDate = (v: unknown): v is string => typeof v === 'string' && v.length <= 64 && !Number.isNaN(new Date(v).getTime());

/** The shape of `values` without a schema: bounded keys, scalars or ranges of numbers or dates. */
const valuesCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  const keys = Object.keys(v);
  if (keys.length > KV_LIMITS.keys)
    return void issues.push({ loc, msg: `A key_value field holds at most ${KV_LIMITS.keys} keys`, type: 'too_long' });
  let total = 0;
  for (const key of keys) {
    const at = [...loc, key];
    if (!KV_KEY_PATTERN.test(key)) {
      issues.push({ loc: at, msg: 'A key has 1 to 64 characters, without "/" or "."', type: 'string_pattern_mismatch' });
      continue;
    }
    const value = v[key];
    if (typeof value === 'string') {
      total += value.length;
      if (value.length > KV_LIMITS.textChars)
        issues.push({ loc: at, msg: `String should have at most ${KV_LIMITS.textChars} characters`, type: 'string_too_long' });
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) issues.push({ loc: at, msg: 'Input should be a finite number', type: 'finite_number' });
    } else if (typeof value === 'boolean') continue;
    else if (isRange(value)) rangeIssues(value, at, issues);
    else
      issues.push({
        loc: at,
        msg: 'Input should be a string, a number, a boolean or a range {from, to}',
        type: 'value_error',
      });
  }
  if (total > KV_LIMITS.totalChars)
    issues.push({ loc, msg: `The text values of a field hold at most ${KV_LIMITS.totalChars} characters`, type: 'too_long' });
};

function rangeIssues(r: Record<string, unknown>, loc: Loc, issues: ValidationIssue[]): void {
  for (const k of Object.keys(r))
    if (k !== 'from' && k !== 'to') issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  const { from, to } = r;
  const numbers = typeof from === 'number' && typeof to === 'number' && Number.isFinite(from) && Number.isFinite(to);
  const dates = isDate(from) && isDate(to);
  if (!numbers && !dates) return void issues.push({ loc, msg: 'A range is {from, to}, both numbers or both dates', type: 'value_error' });
  const lo = numbers ? (from as number) : new Date(from as string).getTime();
  const hi = numbers ? (to as number) : new Date(to as string).getTime();
  if (lo > hi) issues.push({ loc: [...loc, 'to'], msg: 'to should not be before from', type: 'value_error' });
}

/** `PUT …/key_value/{field_id}` body, and an entry of `key_values` in a resource create/modify body. */
@Closed()
export class KeyValueFieldInputDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: {
      oneOf: [
        { type: 'string', maxLength: KV_LIMITS.textChars },
        { type: 'number' },
        { type: 'boolean' },
        {
          type: 'object',
          properties: { from: { oneOf: [{ type: 'number' }, { type: 'string', format: 'date-time' }] }, to: {} },
          required: ['from', 'to'],
        },
      ],
    },
    maxProperties: KV_LIMITS.keys,
    description:
      'Values by key (1–64 characters, no "/" or "."): text, numbers, booleans, dates (ISO strings) or ranges {from, to}. ' +
      "When the KB has a key-value schema whose id is the field's id, the values follow it.",
  })
  @Check(valuesCheck, { whenAbsent: true })
  values!: Record<string, KvValue>;
}

/**
 * The values checked against a schema: every key is one of the schema's, required keys are
 * present, each value has its key's type (`range` keys take `{from, to}`). Issues at `loc` + key.
 */
export function kvSchemaIssues(schema: KvSchemaDto, values: Record<string, unknown>, loc: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const keys = new Map((schema.fields ?? []).map((f) => [f.key, f]));
  for (const key of Object.keys(values))
    if (!keys.has(key))
      issues.push({ loc: [...loc, key], msg: `Key "${key}" is not in the key-value schema ${schema.name}`, type: 'extra_forbidden' });
  for (const [key, f] of keys) {
    const at = [...loc, key];
    const v = values[key];
    if (v === undefined || v === null) {
      if (f.required !== false) issues.push({ loc: at, msg: 'Field required', type: 'missing' });
      continue;
    }
    if (f.range === true) {
      if (!isRange(v)) {
        issues.push({ loc: at, msg: `Input should be a ${f.type} range {from, to}`, type: 'value_error' });
        continue;
      }
      for (const end of ['from', 'to'] as const) typeIssue(f.type, v[end], [...at, end], issues);
      continue;
    }
    typeIssue(f.type, v, at, issues);
  }
  return issues;
}

function typeIssue(type: string, v: unknown, loc: Loc, issues: ValidationIssue[]): void {
  const bad = (msg: string, t: string) => void issues.push({ loc, msg, type: t });
  switch (type) {
    case 'text':
      if (typeof v !== 'string') bad('Input should be a valid string', 'string_type');
      return;
    case 'integer':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) bad('Input should be a valid integer', 'int_type');
      return;
    case 'float':
      if (typeof v !== 'number' || !Number.isFinite(v)) bad('Input should be a valid number', 'float_type');
      return;
    case 'boolean':
      if (typeof v !== 'boolean') bad('Input should be a valid boolean', 'bool_type');
      return;
    case 'date':
      if (!isDate(v)) bad('Input should be a valid datetime', 'datetime_parsing');
      return;
  }
}

/** The values as stored: the dates of date keys (and date ranges) in one ISO form, so they compare as text. */
export function normaliseKvValues(values: Record<string, KvValue>, schema?: KvSchemaDto | null): Record<string, KvValue> {
  const types = new Map((schema?.fields ?? []).map((f) => [f.key, f.type]));
  const iso = (s: string | number): string | number => (typeof s === 'string' ? new Date(s).toISOString() : s);
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => {
      if (isRange(v) && typeof v.from === 'string') return [k, { from: iso(v.from), to: iso(v.to) }];
      if (isRange(v)) return [k, { from: v.from, to: v.to }];
      if (types.get(k) === 'date' && typeof v === 'string') return [k, iso(v)];
      return [k, v];
    }),
  );
}

/** The text a key_value field is searched by: one paragraph per key, `key: value` (ranges `from – to`). */
export function kvText(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}: ${isRange(v) ? `${String(v.from)} – ${String(v.to)}` : String(v)}`)
    .join('\n\n');
}

/** One condition on a key of the key_value field `schema_id` (a filter_expression `key_value` leaf). */
export type KvCondition =
  | { schema_id: string; key: string; eq: string | number | boolean }
  | { schema_id: string; key: string; gte?: number | string; lte?: number | string }
  | { schema_id: string; key: string; contains: string };

/** Checks a `key_value` expression: and/or/not of KvConditions, every problem at its location. */
export function checkKvExpression(e: unknown, loc: Loc, issues: ValidationIssue[]): void {
  if (!isPlainObject(e)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if ('and' in e || 'or' in e) {
    const op = 'and' in e ? 'and' : 'or';
    const list = e[op];
    if (!Array.isArray(list) || list.length === 0)
      return void issues.push({ loc: [...loc, op], msg: 'Input should be a non-empty list', type: 'list_type' });
    list.forEach((x, i) => checkKvExpression(x, [...loc, op, i], issues));
    return;
  }
  if ('not' in e) return checkKvExpression(e['not'], [...loc, 'not'], issues);
  for (const k of Object.keys(e))
    if (!['schema_id', 'key', 'eq', 'gte', 'lte', 'contains'].includes(k))
      issues.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  for (const name of ['schema_id', 'key']) {
    const v = e[name];
    if (v === undefined || v === null) issues.push({ loc: [...loc, name], msg: 'Field required', type: 'missing' });
    else if (typeof v !== 'string' || !KV_KEY_PATTERN.test(v))
      issues.push({ loc: [...loc, name], msg: 'Input should be 1 to 64 characters, without "/" or "."', type: 'string_pattern_mismatch' });
  }
  const has = (k: string) => e[k] !== undefined && e[k] !== null;
  const forms = [has('eq'), has('gte') || has('lte'), has('contains')].filter(Boolean).length;
  if (forms !== 1) return void issues.push({ loc, msg: 'Give exactly one of eq, gte/lte or contains', type: 'value_error' });
  if (has('eq')) {
    const v = e['eq'];
    if (typeof v === 'string' ? v.length > KV_LIMITS.filterChars : typeof v === 'number' ? !Number.isFinite(v) : typeof v !== 'boolean')
      issues.push({
        loc: [...loc, 'eq'],
        msg: 'Input should be a string (at most 1000 characters), a number or a boolean',
        type: 'value_error',
      });
  }
  if (has('contains')) {
    const v = e['contains'];
    if (typeof v !== 'string' || v === '' || v.length > KV_LIMITS.filterChars)
      issues.push({ loc: [...loc, 'contains'], msg: 'Input should be a non-empty string of at most 1000 characters', type: 'string_type' });
  }
  const bounds = ['gte', 'lte'].filter(has);
  for (const b of bounds) {
    const v = e[b];
    if (!(typeof v === 'number' && Number.isFinite(v)) && !isDate(v))
      issues.push({ loc: [...loc, b], msg: 'Input should be a number or a datetime', type: 'value_error' });
  }
  if (bounds.length === 2 && typeof e['gte'] !== typeof e['lte'])
    issues.push({ loc, msg: 'gte and lte should both be numbers or both be dates', type: 'value_error' });
}
