import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AuditRecordedEvent, GetUsageRequest, UsageBucketDto } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource, revertLastMigration, runServiceMigrations } from '@kb/platform/database';
import type { Logger } from '@kb/platform/observability';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { createTestDatabase, type TestDatabase } from '@kb/platform/testing';
import { KbCleanupService, REPORTING_ENTITIES, REPORTING_MIGRATIONS, UsageService } from '../src';
import { SEALER_LOCK } from '../src/usage/usage-accounts';
import { fakeBus, reportingServices } from './usage-fakes';

jest.setTimeout(120_000);

const quietLogger = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

/** Real PostgreSQL (distributed topology) and the embedded PGlite (standalone). */
const BACKENDS = {
  PostgreSQL: () => {
    let db: TestDatabase | undefined;
    return {
      concurrent: true,
      open: async () => {
        db = await createTestDatabase('usageaccounts');
        return createServiceDataSource({
          service: 'reporting',
          schema: 'reporting',
          url: db.url,
          entities: REPORTING_ENTITIES,
          migrations: REPORTING_MIGRATIONS,
          runMigrations: true,
        });
      },
      cleanup: async () => db?.drop(),
    };
  },
  PGlite: () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-usage-accounts-'));
    return {
      concurrent: false,
      open: () =>
        createServiceDataSource({
          service: 'reporting',
          schema: 'reporting',
          entities: REPORTING_ENTITIES,
          migrations: REPORTING_MIGRATIONS,
          dataDir,
          runMigrations: true,
        }),
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
};

const total = (buckets: UsageBucketDto[], name: string): number =>
  buckets.reduce((n, b) => n + (b.metrics.find((m) => m.name === name)?.value ?? 0), 0);

describe.each(Object.entries(BACKENDS))('the account rollup of usage on %s', (_name, backend) => {
  const b = backend();
  const blobRoot = mkdtempSync(join(tmpdir(), 'kb-usage-accounts-blobs-'));
  let ds: DataSource;
  let blobs: BlobStore;
  let svc: ReturnType<typeof reportingServices>;
  const account = randomUUID();
  const known = randomUUID();
  const late = randomUUID();
  const key = randomUUID();
  let n = 0;
  const ev = (
    kbid: string,
    type: AuditRecordedEvent['type'],
    date: string,
    extra: Partial<AuditRecordedEvent> = {},
  ): AuditRecordedEvent => ({
    event_id: `a${++n}`,
    kbid,
    type,
    date,
    audit_metadata: {},
    ...extra,
  });
  const range = { from: '2026-02-01T00:00:00Z', to: '2026-02-01T06:00:00Z' };
  const usage = (req: Partial<GetUsageRequest> = {}) => svc.usage.get({ account_id: account, ...range, aggregation: 'hour', ...req });
  /** The account's rollup minus the sums it must equal (its linked KBs' rows): rows that differ. */
  const drift = async (): Promise<unknown[]> =>
    ds.query(
      `SELECT coalesce(a.hour, s.hour) AS hour, coalesce(a.metric, s.metric) AS metric, a.value AS rollup, s.value AS sum
         FROM (SELECT * FROM reporting.usage_hourly_accounts WHERE account_id = $1 AND value <> 0) a
         FULL JOIN (SELECT u.hour, u.metric, sum(u.value) AS value FROM reporting.usage_hourly u
                      JOIN reporting.kb_accounts k ON k.kbid = u.kbid WHERE k.account_id = $1 GROUP BY 1, 2 HAVING sum(u.value) <> 0) s
           ON s.hour = a.hour AND s.metric = a.metric
        WHERE a.value IS DISTINCT FROM s.value`,
      [account],
    );

  beforeAll(async () => {
    ds = await b.open();
    blobs = await createBlobStore({
      driver: 'fs',
      root: blobRoot,
      signingSecret: randomBytes(32).toString('hex'),
      publicBaseUrl: 'http://127.0.0.1:1',
    });
    // The accounts service knows `known` only, at first.
    svc = reportingServices(ds, { kbs: new Map([[known, account]]), limits: new Map(), published: [] });
    await svc.usage.rememberKb(known, account);
  });

  afterAll(async () => {
    if (ds) await closeServiceDataSource(ds);
    await blobs?.close();
    await b.cleanup();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it('counts account-wide what was sealed before the KB’s account was known, once it is, exactly once', async () => {
    const events = [
      ev(known, 'search', '2026-02-01T01:10:00Z'),
      ev(known, 'new', '2026-02-01T01:20:00Z', { audit_metadata: { bytes: 500 } }),
      ev(late, 'search', '2026-02-01T01:30:00Z'),
      ev(late, 'search', '2026-02-01T02:30:00Z', { nua_key_id: key }),
      ev(late, 'new', '2026-02-01T02:40:00Z', { nua_key_id: key, audit_metadata: { bytes: 700 } }),
      ev(late, 'processed', '2026-02-01T02:41:00Z', {
        nua_key_id: key,
        audit_metadata: { field: 'file/f', usage: { paragraphs: 3, characters: 40, documents: 1, media: false, processing_seconds: 0.25 } },
      }),
    ];
    for (const e of events) await svc.audit.record(e);
    await svc.meter();
    // `late`'s account is not known yet (the accounts service did not answer for it): its counters are its own only.
    let hours = await usage();
    expect([total(hours, 'searches_performed'), total(hours, 'resources'), total(hours, 'storage_bytes')]).toEqual([1, 1, 500]);
    expect(total(await usage({ kb_id: known }), 'searches_performed')).toBe(1);
    expect(await drift()).toEqual([]);

    // Then accounts' `kbCreated` comes: the KB's counters so far join the account's.
    svc.accounts.kbs.set(late, account);
    await svc.usage.rememberKb(late, account);
    hours = await usage();
    expect(hours.map((h) => h.metrics.find((m) => m.name === 'searches_performed')?.value)).toEqual([0, 2, 1, 0, 0, 0]);
    expect([total(hours, 'resources'), total(hours, 'storage_bytes'), total(hours, 'paragraphs_processed')]).toEqual([2, 1200, 3]);
    expect(total(hours, 'pre_processing_time')).toBe(0.25);
    // Delivered again (another process, no memory of it): nothing more.
    await new UsageService(ds, fakeBus(svc.accounts), quietLogger).rememberKb(late, account);
    expect(await usage()).toEqual(hours);
    // From now on its events count account-wide as they are sealed.
    await svc.audit.record(ev(late, 'search', '2026-02-01T03:00:00Z'));
    await svc.meter();
    expect(total(await usage(), 'searches_performed')).toBe(4);
    expect(await drift()).toEqual([]);
    // Other aggregations read the same rows; a key's usage is its own rows, as before.
    const [day] = await usage({ aggregation: 'day', from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' });
    expect([total([day as UsageBucketDto], 'searches_performed'), total([day as UsageBucketDto], 'storage_bytes')]).toEqual([4, 1200]);
    const byKey = await usage({ nua_key_id: key });
    expect([
      total(byKey, 'searches_performed'),
      total(byKey, 'resources'),
      total(byKey, 'storage_bytes'),
      total(byKey, 'paragraphs_processed'),
    ]).toEqual([1, 1, 700, 3]);
  });

  it("keeps a deleted KB's counters in the account's sums, less what it held; the key's too", async () => {
    const cleanup = new KbCleanupService(ds, blobs, quietLogger, svc.usage);
    const before = await usage();
    const byKeyBefore = await usage({ nua_key_id: key });
    await cleanup.onKbDeleted({ account_id: account, kb_id: late });
    svc.accounts.kbs.delete(late);
    const after = await usage();
    for (const name of [
      'searches_performed',
      'paragraphs_processed',
      'chars_processed',
      'pre_processing_time',
      'non_media_files_processed',
    ])
      expect([name, total(after, name)]).toEqual([name, total(before, name)]);
    expect([total(after, 'resources'), total(after, 'storage_bytes')]).toEqual([1, 500]);
    const byKey = await usage({ nua_key_id: key });
    expect(total(byKey, 'searches_performed')).toBe(total(byKeyBefore, 'searches_performed'));
    expect(total(byKey, 'paragraphs_processed')).toBe(3);
    expect(await drift()).toEqual([]);
    // Delivered again: nothing changes.
    await cleanup.onKbDeleted({ account_id: account, kb_id: late });
    expect(await usage()).toEqual(after);
    expect(await drift()).toEqual([]);
  });

  it('links a KB only once no batch is being sealed, so a batch sealing meanwhile counts account-wide too', async () => {
    if (!b.concurrent) return; // one session: PGlite runs one transaction at a time anyway
    const kb = randomUUID();
    const sealing = ds.createQueryRunner();
    await sealing.connect();
    try {
      // A batch of `kb` being sealed before its account is known (what the sealer's transaction does).
      await sealing.startTransaction();
      expect((await sealing.query(`SELECT pg_try_advisory_xact_lock($1) AS ok`, [SEALER_LOCK]))[0].ok).toBe(true);
      await sealing.query(
        `INSERT INTO reporting.usage_hourly (kbid, hour, metric, value) VALUES ($1, '2026-02-01T04:00:00Z', 'searches_performed', 5)`,
        [kb],
      );
      let linked = false;
      const linking = svc.usage.rememberKb(kb, account).then(() => (linked = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(linked).toBe(false);
      await sealing.commitTransaction();
      await linking;
    } finally {
      await sealing.release();
    }
    const hours = await usage();
    expect(hours[4]?.metrics.find((m) => m.name === 'searches_performed')?.value).toBe(5);
    expect(await drift()).toEqual([]);
  });

  it('is filled by its migration from the rows counted before it', async () => {
    const before = await usage();
    const [day] = await usage({ aggregation: 'day', from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' });
    expect(await revertLastMigration(ds)).toEqual(['UsageAccounts1764890000000']);
    expect(await runServiceMigrations(ds)).toEqual(['UsageAccounts1764890000000']);
    expect(await usage()).toEqual(before);
    expect(await usage({ aggregation: 'day', from: '2026-02-01T00:00:00Z', to: '2026-02-02T00:00:00Z' })).toEqual([day]);
    expect(total(before, 'searches_performed')).toBeGreaterThan(0);
    expect(await drift()).toEqual([]);
  });
});
