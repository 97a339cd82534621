import { collectIssues, validatePayload } from '../common/validation';
import { DomainError } from '../common/errors';
import { ActivityQueryBody } from './activity-query.dto';
import { RequestActivityDownloadRequest } from './activity-download.dto';
import { RemiQueryBody, RemiQueryRequest } from './remi-query.dto';
import { ActivityQueryRequest } from './reporting.subjects';

const KB = '7b0f3f3e-1c5a-4d53-9a39-2f1d1c1e0a11';
type Issue = { loc: (string | number)[]; msg: string; type: string };
const issuesOf = (cls: Parameters<typeof collectIssues>[0], plain: unknown): [string, string][] =>
  collectIssues(cls, plain).issues.map((i) => [i.loc.join('.'), i.type]);
const detailOf = (fn: () => unknown): Issue[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return (err.details as { detail: Issue[] }).detail;
    throw err;
  }
  throw new Error('expected a 422');
};

describe('ActivityQueryRequest (the query on the bus, as the gateway checks it)', () => {
  const check = (event_type: string, body: unknown) =>
    detailOf(() => validatePayload(ActivityQueryRequest, { kbid: KB, event_type, body }));

  it('accepts a full query and keeps it typed', () => {
    const req = validatePayload(ActivityQueryRequest, {
      kbid: KB,
      event_type: 'chat',
      body: {
        year_month: '2026-11',
        show: ['answer', 'audit_metadata.team', 'feedback_good'],
        filters: { feedback_good: { eq: true }, answer: { ilike: '%x%' }, audit_metadata: [{ key: 'team', eq: 'a' }], status: { ne: 0 } },
        pagination: { limit: 0, ending_before: 7 },
      },
    });
    expect(req.body.filters.audit_metadata?.[0]?.key).toBe('team');
    expect(req.body.pagination?.ending_before).toBe(7);
  });

  it('lists an unknown type at path.event_type with every body problem, read with the members of every type', () => {
    expect(check('nope', { year_month: '2026-11', show: ['answer'], filters: { answer: { eq: 1 } } })).toEqual([
      { loc: ['path', 'event_type'], msg: expect.stringContaining("'visited'"), type: 'enum' },
      { loc: ['body', 'filters', 'answer', 'eq'], msg: 'Input should be a valid string', type: 'string_type' },
    ]);
  });

  it('refuses the members of other event types, show-only members in filters, and operators of other kinds', () => {
    expect(
      check('visited', {
        year_month: '2026-11',
        show: ['question', 'id', 'id', 'audit_metadata.', `audit_metadata.${'k'.repeat(101)}`],
        filters: { question: { eq: 'x' }, date: { gt: 'x' }, details: { eq: 'x' }, nope: {} },
      }).map((i) => [i.loc.join('.'), i.type, i.msg.slice(0, 40)]),
    ).toEqual([
      ['body.show.0', 'value_error', 'question is not a field. List of fields:'],
      ['body.show.2', 'unique', 'Set items should be unique'],
      ['body.show.3', 'value_error', 'audit_metadata. is not a field. List of '],
      ['body.show.4', 'value_error', `audit_metadata.${'k'.repeat(25)}`],
      ['body.filters.question', 'extra_forbidden', 'Extra inputs are not permitted'],
      ['body.filters.date', 'value_error', 'date can be shown, not filtered'],
      ['body.filters.details', 'value_error', 'details can be shown, not filtered'],
      ['body.filters.nope', 'extra_forbidden', 'Extra inputs are not permitted'],
    ]);
    expect(
      check('chat', { year_month: '2026-11', filters: { feedback_good: { like: 'x', eq: 'yes', isnull: 1 }, status: { eq: 1.5 } } }).map(
        (i) => [i.loc.join('.'), i.type],
      ),
    ).toEqual([
      ['body.filters.feedback_good.like', 'extra_forbidden'],
      ['body.filters.feedback_good.eq', 'bool_type'],
      ['body.filters.feedback_good.isnull', 'bool_type'],
      ['body.filters.status.eq', 'int_type'],
    ]);
  });

  it('bounds show, metadata filters, comparisons, values and pages', () => {
    const bad = check('search', {
      year_month: '1969-12',
      show: Array.from({ length: 61 }, () => 'id'),
      filters: {
        audit_metadata: [{ key: 'k'.repeat(101), eq: 'x' }, 'x', { key: 'a', eq: 'v'.repeat(1001) }],
        user_id: { eq: 'x', ne: 'y', gt: 'a', ge: 'a', lt: 'z', le: 'z', like: 'a', ilike: 'b' },
        user_type: { eq: 'x', ne: 'y', gt: 'a', ge: 'a', lt: 'z', le: 'z', like: 'a', ilike: 'b' },
        client_type: { eq: 'x', ne: 'y', gt: 'a', ge: 'a', lt: 'z', le: 'z', like: 'a', ilike: 'b' },
      },
      pagination: { limit: -1, starting_after: -3, page: 2 },
    });
    expect(bad.map((i) => [i.loc.join('.'), i.type])).toEqual([
      ['body.year_month', 'value_error'],
      ['body.show', 'too_long'],
      ['body.filters.audit_metadata.0.key', 'string_too_long'],
      ['body.filters.audit_metadata.1', 'model_type'],
      ['body.filters.audit_metadata.2.eq', 'string_too_long'],
      ['body.filters', 'too_long'],
      ['body.pagination.page', 'extra_forbidden'],
      ['body.pagination.limit', 'greater_than_equal'],
      ['body.pagination.starting_after', 'int_type'],
    ]);
    expect(
      check('search', { year_month: '2026-11', filters: [], show: 'some', pagination: 3 }).map((i) => [i.loc.join('.'), i.type]),
    ).toEqual([
      ['body.show', 'list_type'],
      ['body.filters', 'model_type'],
      ['body.pagination', 'model_type'],
    ]);
    expect(check('search', [])).toEqual([{ loc: ['body'], msg: 'Input should be a valid object', type: 'model_type' }]);
  });

  it('declares the body type-independently for the document (every member of any type)', () => {
    expect(issuesOf(ActivityQueryBody, { year_month: '2026-11', filters: { answer: { eq: 'a' }, question: { like: '%' } } })).toEqual([]);
  });
});

describe('RequestActivityDownloadRequest', () => {
  const check = (body: unknown) =>
    detailOf(() => validatePayload(RequestActivityDownloadRequest, { kbid: KB, event_type: 'search', format: 'csv', body }));

  it('refuses pagination, a bad address, a notice without an address, a non-boolean notice; the query as the query does', () => {
    expect(
      check({ year_month: '2026-1', filters: {}, pagination: null, email_address: 'nope' }).map((i) => [i.loc.join('.'), i.type]),
    ).toEqual([
      ['body.year_month', 'value_error'],
      ['body.email_address', 'value_error'],
      ['body.pagination', 'extra_forbidden'],
    ]);
    expect(check({ year_month: '2026-11', filters: {}, notify_via_email: true })).toEqual([
      { loc: ['body', 'email_address'], msg: 'An e-mail address is required to be notified by e-mail', type: 'missing' },
    ]);
    expect(check({ year_month: '2026-11', filters: {}, notify_via_email: 'yes', email_address: 'a@b' }).map((i) => i.type)).toEqual([
      'bool_type',
    ]);
    expect(check({ year_month: '2026-11', filters: { answer: { eq: 'a' } } }).map((i) => i.loc.join('.'))).toEqual(['body.filters.answer']);
  });

  it('refuses an unknown format', () => {
    expect(
      detailOf(() => validatePayload(RequestActivityDownloadRequest, { kbid: KB, event_type: 'search', format: 'xml', body: {} })).map(
        (i) => i.loc.join('.'),
      ),
    ).toEqual(['format', 'body.year_month', 'body.filters']);
  });
});

describe('RemiQueryBody', () => {
  it('lists every bad member with its location', () => {
    expect(
      issuesOf(RemiQueryBody, {
        month: '2026-13',
        context_relevance: { value: 6, operation: 'like', aggregation: null },
        feedback_good: 'yes',
        status: 'FINE',
        pagination: { limit: 0, starting_after: -1 },
      }),
    ).toEqual([
      ['month', 'string_pattern_mismatch'],
      ['context_relevance.value', 'value_error'],
      ['context_relevance.operation', 'enum'],
      ['context_relevance.aggregation', 'enum'],
      ['feedback_good', 'bool_type'],
      ['status', 'enum'],
      ['pagination.limit', 'value_error'],
      ['pagination.starting_after', 'int_type'],
    ]);
    expect(issuesOf(RemiQueryBody, { context_relevance: 3, pagination: [] })).toEqual([
      ['month', 'missing'],
      ['context_relevance', 'model_type'],
      ['pagination', 'model_type'],
    ]);
  });

  it('accepts nulls where the spec says "or null", and carries the body typed on the bus', () => {
    const req = validatePayload(RemiQueryRequest, {
      kbid: KB,
      body: { month: '2026-11', context_relevance: null, feedback_good: null, status: null, pagination: { starting_after: null } },
    });
    expect(req.body.month).toBe('2026-11');
    expect(detailOf(() => validatePayload(RemiQueryRequest, { kbid: KB })).map((i) => i.loc.join('.'))).toEqual(['body']);
  });
});
