import { ActivityQueryRequest, DomainError, validatePayload, type ActivityQueryBody, type AuditEventType } from '@kb/contracts';
import { activityQuerySql, likePattern } from './activity-query';

const KB = '7b0f3f3e-1c5a-4d53-9a39-2f1d1c1e0a11';

/** As the bus delivers it: the payload checked by its contract. */
const checked = (type: string, body: unknown): { type: AuditEventType; body: ActivityQueryBody } => {
  const req = validatePayload(ActivityQueryRequest, { kbid: KB, event_type: type.toLowerCase(), body });
  return { type: req.event_type, body: req.body };
};

describe('activityQuerySql', () => {
  it('binds every value and metadata key as a parameter: no request text reaches the SQL', () => {
    const evil = "x'); DROP TABLE reporting.activity_events; --";
    const { type, body } = checked('chat', {
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
    const q = activityQuerySql(KB, type, body);
    const sql = [q.sql, ...q.columns.map((c) => c.sql)].join(' ');
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('%a%');
    expect(q.params.slice(0, 4)).toEqual([KB, 'chat', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
    expect(q.params).toEqual(expect.arrayContaining([evil, '%a%', 3, 9]));
    expect(q.columns.map((c) => c.name)).toEqual(['id', 'date', `audit_metadata.${evil}`, 'answer']);
    expect(q.limit).toBe(5);
    expect(q.descending).toBe(false);
  });

  it('reads the type case-insensitively (the gateway lowers it), pages backwards with ending_before, shows the default members', () => {
    const { type, body } = checked('SEARCH', { year_month: '2026-01', filters: {}, pagination: { ending_before: 4 } });
    const q = activityQuerySql(KB, type, body);
    expect(q.type).toBe('search');
    expect(q.descending).toBe(true);
    expect(q.limit).toBe(10);
    expect(q.columns.map((c) => c.name)).toEqual(['id', 'date', 'question', 'resources_count']);
  });

  it('shows every member of the type but the export ones with "all"', () => {
    const { type, body } = checked('new', { year_month: '2026-01', show: 'all', filters: {} });
    expect(activityQuerySql(KB, type, body).columns.map((c) => c.name)).toEqual([
      'id',
      'date',
      'user_id',
      'user_type',
      'client_type',
      'total_duration',
      'resource_id',
      'audit_metadata',
    ]);
  });

  it('is reached only through the contract, which answers a 422 in the spec shape', () => {
    let err: unknown;
    try {
      checked('new', { year_month: 'x', filters: { answer: { eq: 'a' } } });
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
