import type { ValidationIssue } from '../common/errors';
import { collectIssues } from '../common/validation';
import {
  DatetimeFieldInputDto,
  datetimeText,
  datetimeValue,
  KEYWORDSET_LIMITS,
  KeywordsetFieldInputDto,
  keywordsetText,
  keywordsetValue,
  parseIsoDateTime,
} from './keyword-datetime';
import { CreateResourceDto } from './resource-input.dto';
import { FIELD_TYPE_LETTER } from './resource.dto';

const at = (issues: ValidationIssue[]) => issues.map((i) => [i.loc.join('.'), i.type]);
const keywordIssues = (v: unknown) => at(collectIssues(KeywordsetFieldInputDto, v, { loc: ['body'] }).issues);
const dateIssues = (v: unknown) => at(collectIssues(DatetimeFieldInputDto, v, { loc: ['body'] }).issues);

describe('keywordset field input', () => {
  it('takes the reference shape {keywords: [{value}]}, and no keywords at all', () => {
    expect(keywordIssues({ keywords: [{ value: 'kw1' }, { value: 'kw2' }] })).toEqual([]);
    expect(keywordIssues({ keywords: [] })).toEqual([]);
    expect(keywordIssues({})).toEqual([]);
    expect(keywordsetValue({})).toEqual({ keywords: [] });
    expect(keywordsetValue({ keywords: [{ value: 'a' }] })).toEqual({ keywords: [{ value: 'a' }] });
  });

  it('bounds the list and each keyword, every problem at its location', () => {
    const many = Array.from({ length: KEYWORDSET_LIMITS.keywords + 1 }, (_, i) => ({ value: `k${i}` }));
    expect(keywordIssues({ keywords: many })).toEqual([['body.keywords', 'too_long']]);
    const full = Array.from({ length: KEYWORDSET_LIMITS.keywords }, (_, i) => ({ value: `k${i}` }));
    expect(keywordIssues({ keywords: full })).toEqual([]);
    expect(keywordIssues({ keywords: 'kw1' })).toEqual([['body.keywords', 'list_type']]);
    expect(keywordIssues({ keywords: { value: 'kw1' } })).toEqual([['body.keywords', 'list_type']]);
    expect(
      keywordIssues({
        keywords: [
          { value: 'fine' },
          'bare',
          {},
          { value: 3 },
          { value: '   ' },
          { value: 'x'.repeat(KEYWORDSET_LIMITS.keywordChars + 1) },
          { value: 'ok', weight: 2 },
          null,
        ],
      }),
    ).toEqual([
      ['body.keywords.1', 'model_type'],
      ['body.keywords.2.value', 'missing'],
      ['body.keywords.3.value', 'string_type'],
      ['body.keywords.4.value', 'string_too_short'],
      ['body.keywords.5.value', 'string_too_long'],
      ['body.keywords.6.weight', 'extra_forbidden'],
      ['body.keywords.7', 'model_type'],
    ]);
    expect(keywordIssues({ keywords: [{ value: 'x'.repeat(KEYWORDSET_LIMITS.keywordChars) }] })).toEqual([]);
    expect(keywordIssues({ keywords: [], value: 'x' })).toEqual([['body.value', 'extra_forbidden']]);
  });

  it('is searched as one paragraph per keyword', () => {
    expect(keywordsetText({ keywords: [{ value: ' brass ' }, { value: 'gear box' }] })).toBe('brass\n\ngear box');
    expect(keywordsetText({ keywords: [] })).toBe('');
    expect(keywordsetText({})).toBe('');
  });
});

describe('datetime field input', () => {
  it('takes ISO 8601 date-times, with or without zone, seconds or fraction', () => {
    for (const value of [
      '2024-05-01T10:00:00Z',
      '2024-05-01T10:00:00.123456Z',
      '2024-05-01T10:00Z',
      '2024-05-01 10:00:00',
      '2024-05-01T10:00:00+02:00',
      '2024-05-01T10:00:00-0530',
      '2024-05-01T10:00:00+02',
      '2024-02-29T23:59:59z',
      '2000-02-29T00:00:00Z',
      '0000-02-29T00:00:00Z',
      '0004-02-29T00:00:00Z',
    ])
      expect([value, dateIssues({ value })]).toEqual([value, []]);
  });

  it('refuses what is not a date-time (422 datetime_parsing), a non-string, and a missing value', () => {
    for (const value of [
      '2024-05-01',
      'yesterday',
      '',
      '2024-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '0100-02-29T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-05-01T24:00:00Z',
      '2024-05-01T10:60:00Z',
      '2024-05-01T10:00:00+25:00',
      '2024-05-01T10:00:00Zjunk',
      `2024-05-01T10:00:00.${'1'.repeat(60)}Z`,
    ])
      expect([value, dateIssues({ value })]).toEqual([value, [['body.value', 'datetime_parsing']]]);
    expect(dateIssues({ value: 1714557600 })).toEqual([['body.value', 'datetime_type']]);
    expect(dateIssues({ value: ['2024-05-01T10:00:00Z'] })).toEqual([['body.value', 'datetime_type']]);
    expect(dateIssues({})).toEqual([['body.value', 'missing']]);
    expect(dateIssues({ value: null })).toEqual([['body.value', 'missing']]);
    expect(dateIssues({ value: '2024-05-01T10:00:00Z', tz: 'UTC' })).toEqual([['body.tz', 'extra_forbidden']]);
  });

  it('stores the instant in one ISO form (no zone = UTC), searched by it', () => {
    expect(datetimeValue({ value: '2024-05-01T12:00:00+02:00' })).toEqual({ value: '2024-05-01T10:00:00.000Z' });
    expect(datetimeValue({ value: '2024-05-01 10:00' })).toEqual({ value: '2024-05-01T10:00:00.000Z' });
    expect(datetimeValue({ value: '2024-05-01T10:00:00.123456Z' })).toEqual({ value: '2024-05-01T10:00:00.123Z' });
    expect(datetimeValue({ value: '2024-05-01T05:30:00-0530' })).toEqual({ value: '2024-05-01T11:00:00.000Z' });
    expect(parseIsoDateTime(20240501)).toBeUndefined();
    expect(datetimeText({ value: '2024-05-01T10:00:00.000Z' })).toBe('2024-05-01 10:00:00 UTC');
    expect(datetimeText({ value: 'not a date' })).toBe('not a date');
    expect(datetimeText({})).toBe('');
  });
});

describe('keywordsets and datetimes in a resource body', () => {
  it('are maps by field id, each entry checked at its location', () => {
    const issues = at(
      collectIssues(
        CreateResourceDto,
        {
          keywordsets: { kws: { keywords: [{ value: 'a' }, { value: 1 }] }, 'bad id': { keywords: [] } },
          datetimes: { when: { value: 'soon' }, ok: { value: '2024-05-01T10:00:00Z' } },
        },
        { loc: ['body'] },
      ).issues,
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        ['body.keywordsets.kws.keywords.1.value', 'string_type'],
        ['body.datetimes.when.value', 'datetime_parsing'],
      ]),
    );
    expect(issues.some(([loc]) => String(loc).startsWith('body.keywordsets.bad id'))).toBe(true);
    expect(issues.some(([loc]) => String(loc).startsWith('body.datetimes.ok'))).toBe(false);
  });

  it('have their own letters in ids, distinct from every other type', () => {
    expect(FIELD_TYPE_LETTER.keywordset).toBe('w');
    expect(FIELD_TYPE_LETTER.datetime).toBe('d');
    const letters = Object.values(FIELD_TYPE_LETTER);
    expect(new Set(letters).size).toBe(letters.length);
  });
});
