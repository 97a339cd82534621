import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ValidationIssue } from '../common/errors';
import { Check, Closed, isPlainObject, type Loc, type MemberCheck } from '../common/member-checks';

/**
 * The `keywordset` and `datetime` field types (SPEC §1 "keywords, datetime"), in the shapes of the
 * reference's `FieldKeywordset` (`{keywords: [{value}]}`) and `FieldDatetime` (`{value}`)
 * (docs/keyword-datetime-fields.md).
 */
export const KEYWORDSET_LIMITS = {
  /** Keywords of one field. */
  keywords: 1_000,
  /** Characters of one keyword. */
  keywordChars: 1_000,
} as const;

/**
 * An ISO 8601 date-time: a calendar date, `T` (or a space), hours and minutes, optional seconds and
 * fraction, optional zone (`Z` or `±HH:MM`, `±HHMM`, `±HH`; none = UTC).
 */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** The instant an ISO 8601 date-time names, or undefined when it is not one (a date alone, 2024-02-30, 25:00…). */
export function parseIsoDateTime(v: unknown): Date | undefined {
  if (typeof v !== 'string' || v.length > 64) return undefined;
  const m = ISO_DATE_TIME.exec(v);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > daysInMonth(year, month)) return undefined;
  const zone = m[8];
  if (zone && /^[+-]/.test(zone) && (Number(zone.slice(1, 3)) > 23 || Number(zone.replace(':', '').slice(3) || '0') > 59)) return undefined;
  const fraction = (m[7] ?? '').slice(0, 4); // milliseconds: JS dates keep no more
  const normal = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${fraction}${normaliseZone(zone)}`;
  const date = new Date(normal);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Days of a month of the proleptic Gregorian calendar (any year 0000–9999). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function normaliseZone(zone: string | undefined): string {
  if (!zone || zone.toUpperCase() === 'Z') return 'Z';
  const digits = zone.slice(1).replace(':', '');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
}

const keywordsCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  if (v.length > KEYWORDSET_LIMITS.keywords)
    return void issues.push({
      loc,
      msg: `List should have at most ${KEYWORDSET_LIMITS.keywords} items after validation, not ${v.length}`,
      type: 'too_long',
    });
  v.forEach((k, i) => keywordIssues(k, [...loc, i], issues));
};

function keywordIssues(k: unknown, loc: Loc, issues: ValidationIssue[]): void {
  if (!isPlainObject(k)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  for (const member of Object.keys(k))
    if (member !== 'value') issues.push({ loc: [...loc, member], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  const value = k['value'];
  const at = [...loc, 'value'];
  if (value === undefined || value === null) issues.push({ loc: at, msg: 'Field required', type: 'missing' });
  else if (typeof value !== 'string') issues.push({ loc: at, msg: 'Input should be a valid string', type: 'string_type' });
  else if (value.trim().length === 0) issues.push({ loc: at, msg: 'String should have at least 1 character', type: 'string_too_short' });
  else if (value.length > KEYWORDSET_LIMITS.keywordChars)
    issues.push({ loc: at, msg: `String should have at most ${KEYWORDSET_LIMITS.keywordChars} characters`, type: 'string_too_long' });
}

const dateTimeCheck: MemberCheck = (v, loc, issues) => {
  if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
  if (typeof v !== 'string') return void issues.push({ loc, msg: 'Input should be a valid datetime', type: 'datetime_type' });
  if (!parseIsoDateTime(v))
    issues.push({ loc, msg: 'Input should be a valid datetime (ISO 8601, e.g. 2024-05-01T10:00:00Z)', type: 'datetime_parsing' });
};

/** One keyword of a keywordset field. */
export class KeywordDto {
  @ApiProperty({ minLength: 1, maxLength: KEYWORDSET_LIMITS.keywordChars }) value!: string;
}

/** `PUT …/keywordset/{field_id}` body, and an entry of `keywordsets` in a resource create/modify body. */
@Closed()
export class KeywordsetFieldInputDto {
  @ApiPropertyOptional({
    type: [KeywordDto],
    maxItems: KEYWORDSET_LIMITS.keywords,
    description: `The keywords (at most ${KEYWORDSET_LIMITS.keywords}, each of 1 to ${KEYWORDSET_LIMITS.keywordChars} characters); none when absent.`,
  })
  @Check(keywordsCheck)
  keywords?: KeywordDto[];
}

/** `PUT …/datetime/{field_id}` body, and an entry of `datetimes` in a resource create/modify body. */
@Closed()
export class DatetimeFieldInputDto {
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'An ISO 8601 date-time (no zone = UTC); stored in one form, e.g. 2024-05-01T10:00:00.000Z.',
  })
  @Check(dateTimeCheck, { whenAbsent: true })
  value!: string;
}

/** A keywordset field's value as stored: `{keywords: [{value}]}` (an absent list stored empty). */
export function keywordsetValue(input: KeywordsetFieldInputDto): { keywords: { value: string }[] } {
  return { keywords: (input.keywords ?? []).map((k) => ({ value: k.value })) };
}

/** A datetime field's value as stored: the instant in one ISO form, so values compare as text. */
export function datetimeValue(input: DatetimeFieldInputDto): { value: string } {
  const date = parseIsoDateTime(input.value);
  return { value: date ? date.toISOString() : input.value };
}

/** The text a keywordset field is searched by: one paragraph per keyword. */
export function keywordsetText(value: Record<string, unknown>): string {
  const keywords = Array.isArray(value['keywords']) ? (value['keywords'] as unknown[]) : [];
  return keywords
    .map((k) => (isPlainObject(k) && typeof k['value'] === 'string' ? k['value'].trim() : ''))
    .filter((k) => k.length > 0)
    .join('\n\n');
}

/**
 * The text a datetime field is searched by: its UTC date and time as words, `2024-05-01 10:00:00 UTC`
 * (the stored ISO form `2024-05-01T10:00:00.000Z` would index `01t10` as one word).
 */
export function datetimeText(value: Record<string, unknown>): string {
  const v = value['value'];
  if (typeof v !== 'string') return '';
  const date = parseIsoDateTime(v);
  if (!date) return v;
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}
