import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { type AuditRecordedEvent, type EffectiveLimits, type GetUsageRequest, type UsageBucketDto } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { reportingServices } from './usage-fakes';

jest.setTimeout(60_000);

const unlimited = (): EffectiveLimits => {
  const monthly = Object.fromEntries(
    [
      'monthly_limit_paragraphs_processed',
      'monthly_limit_docs_no_media_processed',
      'monthly_limit_media_seconds_processed',
      'monthly_limit_paragraphs_stored',
      'monthly_limit_hosted_searches_performed',
      'monthly_limit_hosted_answers_generated',
      'monthly_limit_self_hosted_searches_performed',
      'monthly_limit_self_hosted_answers_generated',
      'storage_limit_max_bytes_per_kb',
      'storage_limit_max_resources_per_kb',
      'monthly_limit_non_media_files_processed',
      'monthly_limit_chars_processed',
    ].map((k) => [k, -1]),
  ) as EffectiveLimits['usage'];
  return {
    upload: { upload_limit_max_media_file_size: -1, upload_limit_max_non_media_file_size: -1 },
    usage: { ...monthly },
    processing: { ...monthly },
  };
};

const metric = (b: UsageBucketDto | undefined, name: string): number | undefined => b?.metrics.find((m) => m.name === name)?.value;

describe('usage metering and blocks on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kb-reporting-usage-'));
  let ds: DataSource;
  let svc: ReturnType<typeof reportingServices>;
  const account = randomUUID();
  const otherAccount = randomUUID();
  const kb = randomUUID();
  const kb2 = randomUUID();
  const foreignKb = randomUUID();
  let n = 0;
  const ev = (type: AuditRecordedEvent['type'], date: string, extra: Partial<AuditRecordedEvent> = {}): AuditRecordedEvent => ({
    event_id: `u${++n}`,
    kbid: kb,
    type,
    date,
    audit_metadata: {},
    ...extra,
  });

  beforeAll(async () => {
    ds = await createServiceDataSource({
      service: 'reporting',
      schema: 'reporting',
      entities: REPORTING_ENTITIES,
      migrations: REPORTING_MIGRATIONS,
      dataDir,
      runMigrations: true,
    });
    svc = reportingServices(ds, {
      kbs: new Map([
        [kb, account],
        [kb2, account],
        [foreignKb, otherAccount],
      ]),
      limits: new Map([
        [account, unlimited()],
        [otherAccount, unlimited()],
      ]),
      published: [],
    });
  });

  afterAll(async () => {
    await closeServiceDataSource(ds);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts each stored event once, in UTC hours, per KB and account-wide', async () => {
    const processed = ev('processed', '2026-03-02T10:15:00Z', {
      audit_metadata: {
        field: 'file/doc',
        usage: { paragraphs: 4, characters: 120, pages: 1, media_seconds: 0, documents: 1, media: false },
      },
    });
    const search = ev('search', '2026-03-02T10:59:59Z', { details: { query: 'q' } });
    const events = [
      ev('new', '2026-03-02T10:00:00Z'),
      ev('new', '2026-03-02T11:30:00Z'),
      ev('new', '2026-03-02T11:31:00Z', { kbid: kb2 }),
      ev('deleted', '2026-03-03T00:00:00Z'),
      search,
      ev('search', '2026-03-02T11:00:00Z'),
      ev('suggest', '2026-03-02T11:00:00Z'),
      ev('chat', '2026-03-02T11:05:00Z', { details: { question: 'q', answer: 'a' } }),
      ev('chat', '2026-03-02T11:06:00Z', { details: { question: 'q', answer: '', status: 'error' } }),
      ev('chat', '2026-03-02T11:07:00Z', { details: { feedback: { learning_id: 'l', good: true } } }),
      processed,
      ev('processed', '2026-03-02T10:20:00Z', {
        audit_metadata: { field: 'file/video', usage: { paragraphs: 2, characters: 30, media_seconds: 61.5, documents: 1, media: true } },
      }),
      ev('indexed', '2026-03-02T10:16:00Z', { audit_metadata: { paragraphs: 4 } }),
    ];
    await Promise.all(events.map((e) => svc.audit.record(e)));
    await svc.meter();
    // The bus delivers at least once: the same events again, alone and in a batch, count nothing more.
    await Promise.all([svc.audit.record(processed), svc.audit.record(search), svc.audit.record(ev('search', '2026-03-02T12:00:00Z'))]);
    await svc.meter();
    // Both deliveries of a new event in one batch.
    const twice = ev('search', '2026-03-02T12:30:00Z');
    await Promise.all([svc.audit.record(twice), svc.audit.record({ ...twice })]);
    await svc.meter();

    const hours = await svc.usage.get({
      account_id: account,
      kb_id: kb,
      from: '2026-03-02T10:00:00Z',
      to: '2026-03-02T13:00:00Z',
      aggregation: 'hour',
    });
    expect(hours.map((b) => b.timestamp)).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T11:00:00.000Z', '2026-03-02T12:00:00.000Z']);
    expect(hours[0]?.metrics.map((m) => m.name)).toContain('pre_processing_time');
    expect([
      metric(hours[0], 'searches_performed'),
      metric(hours[1], 'searches_performed'),
      metric(hours[2], 'searches_performed'),
    ]).toEqual([1, 1, 2]);
    expect([metric(hours[0], 'resources'), metric(hours[1], 'resources')]).toEqual([1, 1]);
    expect(metric(hours[1], 'answers_generated')).toBe(1);
    expect(metric(hours[0], 'paragraphs_processed')).toBe(6);
    expect(metric(hours[0], 'chars_processed')).toBe(150);
    expect(metric(hours[0], 'media_seconds_processed')).toBe(61.5);
    expect(metric(hours[0], 'docs_no_media_processed')).toBe(1);
    expect(metric(hours[0], 'non_media_files_processed')).toBe(1);
    expect(metric(hours[0], 'paragraphs_stored')).toBe(4);

    const day = await svc.usage.get({ account_id: account, from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z', aggregation: 'day' });
    expect(day.map((b) => [b.timestamp, metric(b, 'resources')])).toEqual([
      ['2026-03-01T00:00:00.000Z', 0],
      ['2026-03-02T00:00:00.000Z', 3],
      ['2026-03-03T00:00:00.000Z', -1],
    ]);
    const month = await svc.usage.get({
      account_id: account,
      from: '2026-03-01T00:00:00Z',
      to: '2026-04-01T00:00:00Z',
      aggregation: 'month',
    });
    expect(month).toHaveLength(1);
    expect(metric(month[0], 'searches_performed')).toBe(4);
    const week = await svc.usage.get({
      account_id: account,
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-03T00:00:00Z',
      aggregation: 'week',
    });
    expect(week.map((b) => b.timestamp)).toEqual(['2026-03-02T00:00:00.000Z']); // a Monday
    const millennium = await svc.usage.get({
      account_id: account,
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-03T00:00:00Z',
      aggregation: 'millennium',
    });
    expect(millennium.map((b) => [b.timestamp, metric(b, 'searches_performed')])).toEqual([['2001-01-01T00:00:00.000Z', 4]]);
  });

  it('meters what an understanding-API key caused per key as well, once, and shows it with nua_key_id', async () => {
    const key = randomUUID();
    const otherKey = randomUUID();
    const day = { from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z', aggregation: 'day' as const };
    const pushed = ev('new', '2026-05-01T09:00:00Z', { nua_key_id: key, audit_metadata: { bytes: 1000 } });
    const processed = ev('processed', '2026-05-01T09:01:00Z', {
      nua_key_id: key,
      audit_metadata: { field: 'file/doc', usage: { paragraphs: 3, characters: 90, documents: 1, media: false } },
    });
    await Promise.all([
      svc.audit.record(pushed),
      svc.audit.record(processed),
      svc.audit.record(ev('indexed', '2026-05-01T09:01:00Z', { nua_key_id: key, audit_metadata: { paragraphs: 3 } })),
      svc.audit.record(ev('new', '2026-05-01T09:02:00Z', { kbid: kb2, nua_key_id: otherKey })),
      // Not by a key: counted for the KB only.
      svc.audit.record(ev('new', '2026-05-01T09:03:00Z')),
      // A publisher's detail of that name is not a key.
      svc.audit.record(ev('search', '2026-05-01T09:04:00Z', { details: { query: 'q', nua_key_id: key } })),
    ]);
    await svc.meter();
    // Delivered again: counted once, per key too.
    await Promise.all([svc.audit.record(pushed), svc.audit.record(processed)]);
    await svc.meter();

    const [byKey] = await svc.usage.get({ account_id: account, nua_key_id: key, ...day });
    expect(metric(byKey, 'resources')).toBe(1);
    expect(metric(byKey, 'storage_bytes')).toBe(1000);
    expect(metric(byKey, 'paragraphs_processed')).toBe(3);
    expect(metric(byKey, 'non_media_files_processed')).toBe(1);
    expect(metric(byKey, 'paragraphs_stored')).toBe(3);
    expect(metric(byKey, 'searches_performed')).toBe(0);
    const [all] = await svc.usage.get({ account_id: account, ...day });
    expect(metric(all, 'resources')).toBe(3);
    expect(metric(all, 'searches_performed')).toBe(1);
    // Per KB and key; the other key's push was in the other KB.
    expect(metric((await svc.usage.get({ account_id: account, kb_id: kb2, nua_key_id: key, ...day }))[0], 'resources')).toBe(0);
    expect(metric((await svc.usage.get({ account_id: account, kb_id: kb2, nua_key_id: otherKey, ...day }))[0], 'resources')).toBe(1);
    // Another account sees nothing of this key's usage in this account's KBs.
    expect(metric((await svc.usage.get({ account_id: otherAccount, nua_key_id: key, ...day }))[0], 'resources')).toBe(0);
  });

  it('refuses too many buckets, an empty range, and a KB of another account', async () => {
    await expect(
      svc.usage.get({ account_id: account, from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', aggregation: 'hour' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(
      svc.usage.get({ account_id: account, from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z', aggregation: 'day' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(
      svc.usage.get({
        account_id: account,
        kb_id: foreignKb,
        from: '2026-01-01T00:00:00Z',
        to: '2026-01-02T00:00:00Z',
        aggregation: 'day',
      }),
    ).rejects.toMatchObject({ code: 'KB_NOT_FOUND' });
    await expect(
      svc.usage.get({
        account_id: account,
        kb_id: randomUUID(),
        from: '2026-01-01T00:00:00Z',
        to: '2026-01-02T00:00:00Z',
        aggregation: 'day',
      }),
    ).rejects.toMatchObject({ code: 'KB_NOT_FOUND' });
    // A year of hours is allowed.
    expect(
      await svc.usage.get({ account_id: account, from: '2025-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', aggregation: 'hour' }),
    ).toHaveLength(8760);
  });

  it('sums a year of hourly rows into hourly buckets', async () => {
    const yearKb = randomUUID();
    svc.accounts.kbs.set(yearKb, account);
    await ds.query(
      `INSERT INTO reporting.usage_hourly (kbid, hour, metric, value)
       SELECT $1, h, m, 1 FROM generate_series('2024-01-01T00:00:00Z'::timestamptz, '2024-12-31T23:00:00Z', interval '1 hour') AS h,
                              unnest(ARRAY['searches_performed', 'answers_generated', 'chars_processed']) AS m`,
      [yearKb],
    );
    // Counted before its account was known: linking the KB adds its rows to the account's.
    await svc.usage.rememberKb(yearKb, account);
    const started = Date.now();
    const year = await svc.usage.get({
      account_id: account,
      kb_id: yearKb,
      from: '2024-01-01T00:00:00Z',
      to: '2025-01-01T00:00:00Z',
      aggregation: 'hour',
    });
    const took = Date.now() - started;
    expect(year).toHaveLength(8784);
    expect(
      year.every((b) => metric(b, 'searches_performed') === 1 && metric(b, 'chars_processed') === 1 && metric(b, 'resources') === 0),
    ).toBe(true);
    const quarters = await svc.usage.get({
      account_id: account,
      from: '2024-01-01T00:00:00Z',
      to: '2025-01-01T00:00:00Z',
      aggregation: 'quarter',
    });
    expect(quarters.map((b) => metric(b, 'answers_generated'))).toEqual([91 * 24, 91 * 24, 92 * 24, 92 * 24]);
    // Not a benchmark (the machine is shared): a bound that only a pathological plan or loop would break.
    expect(took).toBeLessThan(5_000);
  });

  it('blocks a feature when this month reaches its limit, per KB for storage, and unblocks when the limit is raised', async () => {
    const now = new Date().toISOString();
    const limits = unlimited();
    limits.usage.monthly_limit_hosted_searches_performed = 2;
    limits.usage.storage_limit_max_resources_per_kb = 1;
    svc.accounts.limits.set(account, limits);
    await svc.blocking.limitsChanged(account);
    // Earlier months' searches do not count; resources held do (all time): kb holds 1 (2 created, 1 deleted in March), kb2 holds 1.
    expect(svc.accounts.published.at(-1)).toEqual({
      account_id: account,
      month: now.slice(0, 7),
      features: [],
      kbs: { [kb]: ['storage'], [kb2]: ['storage'] },
      blocking_state: 'quota',
    });
    await svc.audit.record(ev('search', now));
    await svc.meter();
    await svc.blocking.settled();
    expect(svc.accounts.published).toHaveLength(1);
    await svc.audit.record(ev('search', now));
    await svc.meter();
    // Decided at once, or at the end of the account's decision interval when the last one was that recent.
    await svc.blocking.settled();
    expect(svc.accounts.published.at(-1)?.features).toEqual(['search']);
    expect(await svc.blocking.list()).toEqual([svc.accounts.published.at(-1)]);

    svc.accounts.limits.set(account, unlimited());
    await svc.blocking.limitsChanged(account);
    expect(svc.accounts.published.at(-1)).toEqual({
      account_id: account,
      month: now.slice(0, 7),
      features: [],
      kbs: {},
      blocking_state: 'unblocked',
    });
    expect(await svc.blocking.list()).toEqual([]);
  });

  it('lifts a block of a month that has ended at the next sweep', async () => {
    svc.accounts.limits.set(otherAccount, unlimited());
    await ds.query(`INSERT INTO reporting.account_blocks (account_id, month, features, kbs) VALUES ($1, '2001-01', '["ask"]', '{}')`, [
      otherAccount,
    ]);
    expect(await svc.blocking.list()).toEqual([]); // another month's block is no block
    await svc.blocking.sweep();
    expect(svc.accounts.published.at(-1)).toEqual({
      account_id: otherAccount,
      month: new Date().toISOString().slice(0, 7),
      features: [],
      kbs: {},
      blocking_state: 'unblocked',
    });
    const rows: { month: string; features: string[] }[] = await ds.query(
      `SELECT month, features FROM reporting.account_blocks WHERE account_id = $1`,
      [otherAccount],
    );
    expect(rows).toEqual([{ month: new Date().toISOString().slice(0, 7), features: [] }]);
  });

  it("meters predict calls once: a KB's under the KB, a UA key's under its account and key; self-hosted limits block", async () => {
    const uaAccount = randomUUID();
    const key = randomUUID();
    svc.accounts.limits.set(uaAccount, unlimited());
    const day = { from: '2026-07-01T00:00:00Z', to: '2026-07-02T00:00:00Z', aggregation: 'day' as const };
    const ua = (date: string, details: Record<string, unknown>): AuditRecordedEvent =>
      ev('predict', date, { kbid: uaAccount, nua_key_id: key, details: { scope: 'account', account_id: uaAccount, ...details } });
    const search = ua('2026-07-01T08:00:00Z', { endpoint: 'sentence', self_hosted: 'search' });
    await Promise.all([
      svc.audit.record(search),
      svc.audit.record(ua('2026-07-01T08:01:00Z', { endpoint: 'chat', self_hosted: 'answer', input_tokens: 10, output_tokens: 7 })),
      svc.audit.record(ua('2026-07-01T08:02:00Z', { endpoint: 'chat', self_hosted: 'answer', status: 'error' })),
      svc.audit.record(ua('2026-07-01T08:03:00Z', { endpoint: 'tokens' })),
      svc.audit.record(ev('predict', '2026-07-01T08:04:00Z', { details: { endpoint: 'chat', scope: 'kb', output_tokens: 3 } })),
    ]);
    await svc.meter();
    // Delivered again: stored and counted once.
    await svc.audit.record(search);
    await svc.meter();

    const [own] = await svc.usage.get({ account_id: uaAccount, ...day });
    expect(metric(own, 'predictions_performed')).toBe(4);
    expect(metric(own, 'self_hosted_searches_performed')).toBe(1);
    expect(metric(own, 'self_hosted_answers_generated')).toBe(1);
    expect(metric(own, 'ai_tokens_used')).toBe(17);
    expect(metric(own, 'searches_performed')).toBe(0);
    const [byKey] = await svc.usage.get({ account_id: uaAccount, nua_key_id: key, ...day });
    expect(metric(byKey, 'predictions_performed')).toBe(4);
    // Hourly buckets group on the stored hour itself (no truncation): account-wide and per key alike.
    const hour = { from: '2026-07-01T07:00:00Z', to: '2026-07-01T10:00:00Z', aggregation: 'hour' as const };
    const byHour = async (req: Partial<GetUsageRequest>) =>
      (await svc.usage.get({ account_id: uaAccount, ...hour, ...req })).map((b) => [b.timestamp, metric(b, 'predictions_performed')]);
    const expected = [
      ['2026-07-01T07:00:00.000Z', 0],
      ['2026-07-01T08:00:00.000Z', 4],
      ['2026-07-01T09:00:00.000Z', 0],
    ];
    expect(await byHour({})).toEqual(expected);
    expect(await byHour({ nua_key_id: key })).toEqual(expected);
    expect(metric(byKey, 'self_hosted_answers_generated')).toBe(1);
    // A KB's predict call is the KB's (and its account's), never a self-hosted one.
    const [kbDay] = await svc.usage.get({ account_id: account, kb_id: kb, ...day });
    expect([metric(kbDay, 'predictions_performed'), metric(kbDay, 'ai_tokens_used')]).toEqual([1, 3]);
    expect(metric(kbDay, 'self_hosted_answers_generated')).toBe(0);
    // Another account sees none of it.
    expect(metric((await svc.usage.get({ account_id: otherAccount, ...day }))[0], 'predictions_performed')).toBe(0);

    // This month: one self-hosted search reaches a limit of one; the hosted features stay open.
    const limits = unlimited();
    limits.usage.monthly_limit_self_hosted_searches_performed = 1;
    limits.usage.monthly_limit_self_hosted_answers_generated = 5;
    svc.accounts.limits.set(uaAccount, limits);
    await svc.blocking.limitsChanged(uaAccount);
    expect(svc.accounts.published.filter((p) => p.account_id === uaAccount)).toEqual([]);
    await svc.audit.record(ua(new Date().toISOString(), { endpoint: 'query', self_hosted: 'search' }));
    await svc.meter();
    await svc.blocking.settled();
    expect(svc.accounts.published.at(-1)).toMatchObject({
      account_id: uaAccount,
      features: ['self_hosted_search'],
      blocking_state: 'quota',
    });
    svc.accounts.limits.set(uaAccount, unlimited());
    await svc.blocking.limitsChanged(uaAccount);
    expect(svc.accounts.published.at(-1)).toMatchObject({ account_id: uaAccount, features: [], blocking_state: 'unblocked' });
  });
});
