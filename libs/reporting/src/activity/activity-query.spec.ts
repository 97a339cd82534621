import { DomainError } from '@kb/contracts';
import { likePattern, parseActivityQuery } from './activity-query';

const KB = '7b0f3f3e-1c5a-4d53-9a39-2f1d1c1e0a11';

describe('parseActivityQuery', () => {
  it('binds every value and metadata key as a parameter: no request text reaches the SQL', () => {
    const evil = "x'); DROP TABLE reporting.activity_events; --";
    const q = parseActivityQuery(KB, 'chat', {
      year_month: '2026-11',
      show: [`audit_metadata.${evil}`, 'answer'],
      filters: {
        user_id: { eq: evil, like: evil.slice(0, 40) },
        answer: { ilike: '%a%' },
        audit_metadata: [{ key: evil, ne: evil }],
        total_duration: { ge: 3, isnull: false },
      },
      pagination: { limit: 5, starting_after: 9 },
    });
    const sql = [q.sql, ...q.columns.map((c) => c.sql)].join(' ');
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('%a%');
    expect(q.params.slice(0, 4)).toEqual([KB, 'chat', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
    expect(q.params).toEqual(expect.arrayContaining([evil, '%a%', 3, 9]));
    expect(q.columns.map((c) => c.name)).toEqual(['id', 'date', `audit_metadata.${evil}`, 'answer']);
    expect(q.limit).toBe(5);
    expect(q.descending).toBe(false);
  });

  it('reads the type case-insensitively and pages backwards with ending_before', () => {
    const q = parseActivityQuery(KB, 'SEARCH', { year_month: '2026-01', filters: {}, pagination: { ending_before: 4 } });
    expect(q.type).toBe('search');
    expect(q.descending).toBe(true);
    expect(q.columns.map((c) => c.name)).toEqual(['id', 'date', 'question', 'resources_count']);
  });

  it('answers a 422 in the spec shape', () => {
    let err: unknown;
    try {
      parseActivityQuery(KB, 'new', { year_month: 'x', filters: { answer: { eq: 'a' } } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).details).toEqual({
      detail: [
        { loc: ['body', 'year_month'], msg: 'year_month must be in the format YYYY-MM', type: 'value_error' },
        { loc: ['body', 'filters', 'answer'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ],
    });
  });
});

describe('likePattern', () => {
  it("keeps the user's wildcards and escapes, and makes a trailing lone backslash literal", () => {
    expect(likePattern('50\\%%')).toBe('50\\%%');
    expect(likePattern('a\\')).toBe('a\\\\');
    expect(likePattern('a\\\\')).toBe('a\\\\');
    expect(likePattern('a\\\\\\')).toBe('a\\\\\\\\');
  });
});
