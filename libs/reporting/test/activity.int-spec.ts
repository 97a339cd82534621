import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { ActivityQueryRequest, DomainError, validatePayload, type ActivityQueryItem, type AuditRecordedEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource, revertLastMigration, runServiceMigrations } from '@kb/platform/database';
import { createTestDatabase, type TestDatabase } from '@kb/platform/testing';
import { ActivityService } from '../src/activity/activity.service';
import type { AuditService } from '../src/audit/audit.service';
import { DEFAULT_REPORTING_OPTIONS } from '../src/reporting.tokens';
import { reportingServices } from './usage-fakes';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { ReportingInitial1763800000000 } from '../src/migrations/1763800000000-reporting-initial';

jest.setTimeout(120_000);

type Backend = { name: string; open: (migrations: typeof REPORTING_MIGRATIONS) => Promise<DataSource>; cleanup: () => Promise<void> };

/** Real PostgreSQL (distributed topology) and the embedded PGlite (standalone): the partitioned table must work on both. */
function postgres(): Backend {
  let db: TestDatabase | undefined;
  return {
    name: 'PostgreSQL',
    open: async (migrations) => {
      db ??= await createTestDatabase('activity');
      return createServiceDataSource({
        service: 'reporting',
        schema: 'reporting',
        url: db.url,
        entities: REPORTING_ENTITIES,
        migrations,
        runMigrations: true,
      });
    },
    cleanup: async () => db?.drop(),
  };
}

function pglite(): Backend {
  const dataDir = mkdtempSync(join(tmpdir(), 'kb-activity-'));
  return {
    name: 'PGlite',
    open: (migrations) =>
      createServiceDataSource({
        service: 'reporting',
        schema: 'reporting',
        entities: REPORTING_ENTITIES,
        migrations,
        dataDir,
        runMigrations: true,
      }),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

const at = (iso: string): string => new Date(iso).toISOString();

describe.each([
  ['PostgreSQL', postgres],
  ['PGlite', pglite],
] as const)('activity log on %s', (_name, backend) => {
  const b = backend();
  let ds: DataSource;
  let audit: AuditService;
  let activity: ActivityService;
  const kb = randomUUID();
  const other = randomUUID();
  const oldKb = randomUUID();

  const query = async (kbid: string, type: string, body: unknown): Promise<{ hasMore: boolean; records: Record<string, unknown>[] }> => {
    const items: ActivityQueryItem[] = [];
    // As the gateway and the bus deliver it: the path's type in lower case, the payload checked by its contract.
    const req = validatePayload(ActivityQueryRequest, { kbid, event_type: type.toLowerCase(), body });
    for await (const item of activity.query(req)) items.push(item);
    const [page, ...rest] = items;
    return { hasMore: page?.type === 'page' && page.has_more, records: rest.map((i) => (i.type === 'record' ? i.record : {})) };
  };
  const issues = async (type: string, body: unknown): Promise<{ loc: (string | number)[]; type: string }[]> => {
    try {
      await query(kb, type, body);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'VALIDATION_FAILED')
        return (err.details?.['detail'] as { loc: (string | number)[]; type: string }[]).map(({ loc, type: t }) => ({ loc, type: t }));
      throw err;
    }
    throw new Error('expected a validation error');
  };

  const chat = (id: string, extra: Partial<AuditRecordedEvent> = {}, details: Record<string, unknown> = {}): AuditRecordedEvent => ({
    event_id: id,
    kbid: kb,
    type: 'chat',
    date: at('2026-11-10T10:00:00Z'),
    user_id: 'alice',
    user_type: 'user',
    client_type: 'api',
    total_duration: 120,
    audit_metadata: { team: 'blue' },
    details: {
      question: 'What is 50% of a KB?',
      rephrased_question: null,
      answer: 'Half of it.',
      chat_history: [{ author: 'USER', text: 'hi' }],
      model: 'extractive',
      strategies: ['hierarchy'],
      rag_strategies: [{ name: 'hierarchy', count: 2 }],
      learning_id: `l-${id}`,
      status: 'success',
      retrieved_context: [{ key: 'r/t/body/0-10', text: 'Half of it' }],
      time_to_first_char: 42,
      ...details,
    },
    ...extra,
  });
  const feedback = (learningId: string, good: boolean, comment?: string, block?: string): AuditRecordedEvent => ({
    event_id: randomUUID(),
    kbid: kb,
    type: 'chat',
    date: at('2026-11-10T10:05:00Z'),
    user_type: 'user',
    details: {
      feedback: { learning_id: learningId, good, task: 'CHAT', feedback: comment ?? null, text_block_id: block ?? null },
      learning_id: learningId,
    },
  });

  beforeAll(async () => {
    // Events stored by the first schema survive the move to the partitioned table, ids and all.
    const v1 = await b.open([ReportingInitial1763800000000]);
    await v1.query(
      `INSERT INTO reporting.audit_events (id, event_id, kbid, type, date, user_id, user_type, audit_metadata) VALUES
        (7, 'old-1', $1, 'new', '2026-09-03T00:00:00Z', 'u', 'user', '{"a": "1"}'), (8, 'old-2', $1, 'new', '2026-10-04T00:00:00Z', null, null, '{}')`,
      [oldKb],
    );
    await closeServiceDataSource(v1);
    ds = await b.open(REPORTING_MIGRATIONS);
    audit = reportingServices(ds).audit;
    activity = new ActivityService(ds, { ...DEFAULT_REPORTING_OPTIONS, activityQueryTimeoutMs: 5_000 });
  });

  afterAll(async () => {
    if (ds) await closeServiceDataSource(ds);
    await b.cleanup();
  });

  it('keeps the events of the first schema', async () => {
    const { records } = await query(oldKb, 'new', { year_month: '2026-09', filters: {}, show: ['user_id', 'user_type', 'audit_metadata'] });
    expect(records).toEqual([{ id: 7, date: at('2026-09-03T00:00:00Z'), user_id: 'u', user_type: 'user', audit_metadata: { a: '1' } }]);
    expect(await activity.months({ kbid: oldKb, event_type: 'new' })).toEqual({ downloads: ['2026-09', '2026-10'] });
    // New ids continue after the old ones.
    await audit.record({ event_id: 'old-3', kbid: oldKb, type: 'new', date: at('2026-10-05T00:00:00Z') });
    const october = await query(oldKb, 'new', { year_month: '2026-10', filters: {} });
    expect(october.records.map((r) => r['id'])).toEqual([8, expect.any(Number)]);
    expect(october.records[1]?.['id']).toBeGreaterThan(8);
  });

  it('stores each event once, in a partition per month, with its details and the feedback merged by learning id', async () => {
    // Feedback before its answer, the answer delivered twice (in one batch and again later), feedback after it.
    await audit.record(feedback('l-c1', false, 'too short'));
    await Promise.all([
      audit.record(chat('c1')),
      audit.record(chat('c1')),
      audit.record(chat('c2', { user_id: 'bot', user_type: 'nuakey', client_type: 'widget', audit_metadata: { team: 'red_1' } })),
    ]);
    await audit.record(chat('c1'));
    await Promise.all([audit.record(feedback('l-c2', true)), audit.record(feedback('l-c2', false, 'on a block', 'r/t/body/0-10'))]);
    await audit.record(chat('c3', { date: at('2026-12-01T00:00:00Z') }));
    await audit.record(chat('c0', { date: at('2026-10-31T23:59:59.999Z') }));
    await audit.record(chat('c4', { kbid: other }));

    expect(await audit.count({ kbid: kb, type: 'chat' })).toEqual({ count: 4 });
    const partitions: { name: string }[] = await ds.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'reporting.activity_events'::regclass ORDER BY 1`,
    );
    expect(partitions.map((p) => p.name)).toEqual([
      'activity_events_2026_09',
      'activity_events_2026_10',
      'activity_events_2026_11',
      'activity_events_2026_12',
    ]);

    const { records } = await query(kb, 'chat', { year_month: '2026-11', show: 'all', filters: {} });
    expect(records).toHaveLength(2);
    expect(records[0]).toEqual({
      id: expect.any(Number),
      date: at('2026-11-10T10:00:00Z'),
      user_id: 'alice',
      user_type: 'user',
      client_type: 'api',
      total_duration: 120,
      resource_id: null,
      audit_metadata: { team: 'blue' },
      question: 'What is 50% of a KB?',
      resources_count: null,
      filter: null,
      learning_id: 'l-c1',
      rephrased_question: null,
      answer: 'Half of it.',
      retrieved_context: [{ key: 'r/t/body/0-10', text: 'Half of it' }],
      chat_history: [{ author: 'USER', text: 'hi' }],
      feedback_good: false,
      feedback_comment: 'too short',
      feedback: { good: false, feedback: 'too short', task: 'CHAT', date: at('2026-11-10T10:05:00Z') },
      model: 'extractive',
      rag_strategies_names: ['hierarchy'],
      rag_strategies: [{ name: 'hierarchy', count: 2 }],
      status: 0,
      time_to_first_char: 42,
    });
    expect(records[1]).toMatchObject({ user_type: 'nuakey', client_type: 'widget', feedback_good: true, feedback_comment: null });
    expect((records[1]?.['feedback'] as Record<string, unknown>)['text_blocks']).toEqual({
      'r/t/body/0-10': expect.objectContaining({ good: false, feedback: 'on a block' }),
    });
    expect(await activity.months({ kbid: kb, event_type: 'chat' })).toEqual({ downloads: ['2026-10', '2026-11', '2026-12'] });
    expect(await activity.months({ kbid: kb, event_type: 'search' })).toEqual({ downloads: [] });
  });

  describe('queries', () => {
    const searches = Array.from({ length: 12 }, (_, i) => i);
    beforeAll(async () => {
      await Promise.all(
        searches.map((i) =>
          audit.record({
            event_id: `s${i}`,
            kbid: kb,
            type: 'search',
            date: at(`2026-11-${String(i + 1).padStart(2, '0')}T08:00:00Z`),
            total_duration: i * 10,
            user_id: i % 3 === 0 ? undefined : `user-${i % 3}`,
            user_type: i % 2 ? 'nuakey' : 'user',
            client_type: 'api',
            audit_metadata: i % 4 === 0 ? { source: i === 0 ? 'mobile_100%' : 'mobile_1000', "it's": 'quoted' } : { source: 'web' },
            details: {
              query: i === 5 ? 'Quarterly REVENUE' : `question ${i}`,
              features: ['keyword'],
              resources_count: i,
              filters: i === 1 ? ['/l/x'] : null,
            },
          }),
        ),
      );
      await audit.record({
        event_id: 'sx',
        kbid: other,
        type: 'search',
        date: at('2026-11-03T08:00:00Z'),
        user_id: 'user-1',
        details: { query: 'question 2' },
      });
    });

    const ids = async (body: Record<string, unknown>): Promise<number[]> =>
      (await query(kb, 'search', { year_month: '2026-11', ...body })).records.map((r) => Number(r['id']));
    const totals = async (filters: Record<string, unknown>): Promise<number[]> =>
      (await query(kb, 'search', { year_month: '2026-11', filters, show: ['total_duration'], pagination: { limit: 100 } })).records.map(
        (r) => Number(r['total_duration']),
      );

    it('shows the default members of the type, and one metadata key on request', async () => {
      const { records, hasMore } = await query(kb, 'search', { year_month: '2026-11', filters: {}, pagination: { limit: 1 } });
      expect(hasMore).toBe(true);
      expect(records).toEqual([{ id: expect.any(Number), date: at('2026-11-01T08:00:00Z'), question: 'question 0', resources_count: 0 }]);
      const picked = await query(kb, 'search', {
        year_month: '2026-11',
        filters: {},
        show: ['audit_metadata.source', 'filter'],
        pagination: { limit: 2 },
      });
      expect(picked.records.map((r) => [r['audit_metadata.source'], r['filter']])).toEqual([
        ['mobile_100%', null],
        ['web', ['/l/x']],
      ]);
    });

    it('compares members with every operator, and never shows another KB', async () => {
      expect(await totals({ total_duration: { gt: 80 } })).toEqual([90, 100, 110]);
      expect(await totals({ total_duration: { ge: 80, lt: 100 } })).toEqual([80, 90]);
      expect(await totals({ total_duration: { le: 10 } })).toEqual([0, 10]);
      expect(await totals({ resources_count: { eq: 3 } })).toEqual([30]);
      expect(await totals({ user_id: { eq: 'user-1' } })).toEqual([10, 40, 70, 100]);
      // ne keeps the records without the member (SQL's IS DISTINCT FROM).
      expect(await totals({ user_id: { ne: 'user-1' } })).toEqual([0, 20, 30, 50, 60, 80, 90, 110]);
      expect(await totals({ user_id: { isnull: true } })).toEqual([0, 30, 60, 90]);
      expect(await totals({ user_id: { isnull: false }, user_type: { eq: 'nuakey' } })).toEqual([10, 50, 70, 110]);
      expect(await totals({ question: { ilike: '%revenue%' } })).toEqual([50]);
      expect(await totals({ question: { like: '%revenue%' } })).toEqual([]);
      expect(await totals({ question: { like: 'question 1_' } })).toEqual([100, 110]);
      expect(await totals({ id: { ge: 0 }, client_type: { eq: 'api' } })).toHaveLength(12);
      expect((await query(other, 'search', { year_month: '2026-11', filters: {} })).records).toHaveLength(1);
      expect(
        (await query(kb, 'search', { year_month: '2026-11', filters: { user_id: { eq: 'user-1' } }, pagination: { limit: 100 } })).records,
      ).toHaveLength(4);
    });

    it('filters on audit_metadata keys, wildcards meaning what the user escaped', async () => {
      expect(await totals({ audit_metadata: [{ key: 'source', like: 'mobile%' }] })).toEqual([0, 40, 80]);
      // `\%` is a literal percent sign: only "mobile_100%" ends with one.
      expect(await totals({ audit_metadata: [{ key: 'source', like: '%\\%' }] })).toEqual([0]);
      expect(await totals({ audit_metadata: [{ key: 'source', like: 'mobile\\_1%' }] })).toEqual([0, 40, 80]);
      expect(
        await totals({
          audit_metadata: [
            { key: 'source', like: 'mobile_1000' },
            { key: "it's", eq: 'quoted' },
          ],
        }),
      ).toEqual([40, 80]);
      expect(await totals({ audit_metadata: [{ key: 'source', ne: 'web' }] })).toEqual([0, 40, 80]);
      // A pattern ending in a lone backslash matches a literal backslash instead of failing.
      expect(await totals({ audit_metadata: [{ key: 'source', like: 'web\\' }] })).toEqual([]);
      // Text that looks like SQL is only ever a value.
      expect(
        await totals({
          user_id: { eq: "x' OR '1'='1" },
          audit_metadata: [{ key: "source') OR ('1'='1", eq: "'; DROP TABLE reporting.activity_events; --" }],
        }),
      ).toEqual([]);
      expect(await audit.count({ kbid: kb, type: 'search' })).toEqual({ count: 12 });
    });

    it('pages forwards and backwards by record id', async () => {
      const all = await ids({ filters: {}, pagination: { limit: 100 } });
      expect(all).toHaveLength(12);
      expect(all).toEqual([...all].sort((x, y) => x - y));
      const first = await query(kb, 'search', { year_month: '2026-11', filters: {}, pagination: { limit: 5 } });
      expect(first.hasMore).toBe(true);
      const second = await query(kb, 'search', {
        year_month: '2026-11',
        filters: {},
        pagination: { limit: 5, starting_after: first.records[4]?.['id'] },
      });
      const third = await query(kb, 'search', {
        year_month: '2026-11',
        filters: {},
        pagination: { limit: 5, starting_after: second.records[4]?.['id'] },
      });
      expect(third.hasMore).toBe(false);
      expect([...first.records, ...second.records, ...third.records].map((r) => r['id'])).toEqual(all);
      const before = await query(kb, 'search', { year_month: '2026-11', filters: {}, pagination: { limit: 3, ending_before: all[7] } });
      expect(before.records.map((r) => r['id'])).toEqual(all.slice(4, 7));
      expect(before.hasMore).toBe(true);
      expect(
        (await query(kb, 'search', { year_month: '2026-11', filters: {}, pagination: { limit: 3, ending_before: all[2] } })).hasMore,
      ).toBe(false);
      expect(await ids({ filters: { total_duration: { ge: 50 } }, pagination: { limit: 2, starting_after: all[6] } })).toEqual(
        all.slice(7, 9),
      );
      expect(await ids({ filters: {}, pagination: { limit: 0 } })).toEqual([]);
      expect(await ids({ year_month: '2026-10', filters: {} })).toEqual([]);
    });

    it('refuses bad requests, listing every invalid member', async () => {
      expect(await issues('nope', { year_month: '2026-11', filters: {} })).toEqual([{ loc: ['path', 'event_type'], type: 'enum' }]);
      expect(await issues('search', {})).toEqual([
        { loc: ['body', 'year_month'], type: 'missing' },
        { loc: ['body', 'filters'], type: 'missing' },
      ]);
      expect(
        await issues('search', {
          year_month: '2026-13',
          show: ['answer', 'bogus', 5],
          extra: 1,
          filters: {
            date: { eq: 'x' },
            total_duration: { eq: '5' },
            question: { like: 'x'.repeat(201), regex: 'a' },
            feedback_good: { eq: true },
            user_id: 'bob',
            audit_metadata: [{ eq: 'x' }],
          },
          pagination: { limit: 1001, starting_after: 1, ending_before: 2 },
        }),
      ).toEqual([
        { loc: ['body', 'year_month'], type: 'value_error' },
        { loc: ['body', 'show', 0], type: 'value_error' },
        { loc: ['body', 'show', 1], type: 'value_error' },
        { loc: ['body', 'show', 2], type: 'string_type' },
        { loc: ['body', 'filters', 'date'], type: 'value_error' },
        { loc: ['body', 'filters', 'total_duration', 'eq'], type: 'int_type' },
        { loc: ['body', 'filters', 'question', 'like'], type: 'string_too_long' },
        { loc: ['body', 'filters', 'question', 'regex'], type: 'extra_forbidden' },
        { loc: ['body', 'filters', 'feedback_good'], type: 'extra_forbidden' },
        { loc: ['body', 'filters', 'user_id'], type: 'model_type' },
        { loc: ['body', 'filters', 'audit_metadata', 0, 'key'], type: 'missing' },
        { loc: ['body', 'pagination', 'limit'], type: 'less_than_equal' },
        { loc: ['body', 'pagination'], type: 'value_error' },
        { loc: ['body', 'extra'], type: 'extra_forbidden' },
      ]);
      const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v']));
      expect(
        await issues('search', {
          year_month: '2026-11',
          filters: { audit_metadata: Object.entries(many).map(([key]) => ({ key, eq: 'v', ne: 'w' })) },
        }),
      ).toEqual([{ loc: ['body', 'filters', 'audit_metadata'], type: 'too_long' }]);
      expect(
        await issues('search', {
          year_month: '2026-11',
          filters: { audit_metadata: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, eq: 'v', ne: 'w', gt: 'a' })) },
        }),
      ).toEqual([{ loc: ['body', 'filters'], type: 'too_long' }]);
      expect(await issues('visited', { year_month: '2026-11', filters: { question: { eq: 'x' } } })).toEqual([
        { loc: ['body', 'filters', 'question'], type: 'extra_forbidden' },
      ]);
      await expect(activity.months({ kbid: kb, event_type: 'nope' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    });

    it('answers any body with records or a 422, never a database error', async () => {
      const scalar = fc.oneof(
        fc.constantFrom<unknown>(
          null,
          true,
          0,
          -1,
          1.5,
          1e308,
          2 ** 53 + 1,
          '',
          '\\',
          '%',
          '_\\',
          "'",
          '\u0000'.slice(1),
          '9999-12',
          '0000-01',
          '2026-11',
          'x'.repeat(300),
        ),
        fc.string({ maxLength: 20 }),
        fc.integer(),
      );
      const comparison = fc.dictionary(
        fc.constantFrom('eq', 'gt', 'ge', 'lt', 'le', 'ne', 'isnull', 'like', 'ilike', 'key', 'bogus'),
        scalar,
        { maxKeys: 4 },
      );
      const member = fc.constantFrom(
        'id',
        'date',
        'user_id',
        'user_type',
        'client_type',
        'total_duration',
        'resource_id',
        'question',
        'resources_count',
        'filter',
        'answer',
        'status',
        'feedback_good',
        'model',
        'constructor',
        '__proto__',
      );
      const body = fc.record(
        {
          year_month: fc.oneof(scalar, fc.constantFrom('2026-11', '1969-12', '9999-12')),
          show: fc.oneof(
            fc.constant('all'),
            fc.array(
              fc.oneof(
                member,
                fc.string({ maxLength: 30 }).map((k) => `audit_metadata.${k}`),
              ),
              { maxLength: 5 },
            ),
            scalar,
          ),
          filters: fc.oneof(
            fc.dictionary(member, fc.oneof(comparison, scalar), { maxKeys: 4 }),
            fc.record({ audit_metadata: fc.array(comparison, { maxLength: 3 }) }),
            scalar,
          ),
          pagination: fc.oneof(fc.record({ limit: scalar, starting_after: scalar, ending_before: scalar }, { requiredKeys: [] }), scalar),
        },
        { requiredKeys: [] },
      );
      for (const sample of fc.sample(fc.tuple(fc.constantFrom('search', 'chat', 'new', 'Search', 'x'), body), { seed: 19, numRuns: 300 })) {
        const [type, b2] = sample;
        try {
          await query(kb, type, b2);
        } catch (err) {
          if (!(err instanceof DomainError && err.code === 'VALIDATION_FAILED'))
            throw new Error(`${JSON.stringify(sample)} → ${(err as Error).message}`);
        }
      }
    });
  });

  it('reverts to the first schema and back', async () => {
    // Later migrations (REMi scores, …) are reverted first, down to the one that made the activity table.
    for (let i = 0; i < 10; i++) {
      await revertLastMigration(ds);
      const [found] = (await ds.query(`SELECT to_regclass('reporting.audit_events')::text AS r`)) as { r: string | null }[];
      if (found?.r) break;
    }
    const rows: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM reporting.audit_events WHERE kbid = $1`, [kb]);
    expect(Number(rows[0]?.n)).toBe(16);
    await runServiceMigrations(ds);
    expect(await audit.count({ kbid: kb, type: 'chat' })).toEqual({ count: 4 });
  });
});
