import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AuditRecordedEvent, UsageBucketDto } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import type { MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { createTestDatabase, type TestDatabase } from '@kb/platform/testing';
import { DEFAULT_REPORTING_OPTIONS, KbCleanupService, REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { RemiWorkerService } from '../src/remi/remi-worker.service';
import { reportingServices } from './usage-fakes';

jest.setTimeout(90_000);

const quietLogger = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;
const TABLES = [
  'usage_hourly',
  'remi_scores',
  'activity_events',
  'activity_months',
  'chat_feedback',
  'activity_chain_heads',
  'activity_downloads',
  'kb_accounts',
];

/** Real PostgreSQL (distributed topology) and the embedded PGlite (standalone). */
const BACKENDS = {
  PostgreSQL: () => {
    let db: TestDatabase | undefined;
    return {
      open: async () => {
        db = await createTestDatabase('kbcleanup');
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
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-cleanup-'));
    return {
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

describe.each(Object.entries(BACKENDS))("a deleted KB's reporting data on %s", (_name, backend) => {
  const b = backend();
  const blobRoot = mkdtempSync(join(tmpdir(), 'kb-cleanup-blobs-'));
  let ds: DataSource;
  let blobs: BlobStore;
  let svc: ReturnType<typeof reportingServices>;
  let cleanup: KbCleanupService;
  const account = randomUUID();
  const kb = randomUUID();
  const kept = randomUUID();
  let n = 0;
  const date = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 10)).toISOString();
  const events = (kbid: string): AuditRecordedEvent[] => [
    { event_id: `e${++n}`, kbid, type: 'new', date, audit_metadata: { bytes: 1000 } },
    { event_id: `e${++n}`, kbid, type: 'search', date, details: { query: 'q' } },
    {
      event_id: `e${++n}`,
      kbid,
      type: 'chat',
      date,
      details: {
        question: 'Who directed it?',
        answer: 'Scott Derrickson directed it.',
        status: 'success',
        learning_id: `l${n}`,
        retrieved_context: [{ key: 'r/t/a/0-9', text: 'Scott Derrickson directed it.' }],
      },
    },
    {
      event_id: `e${++n}`,
      kbid,
      type: 'chat',
      date,
      details: { feedback: { learning_id: `l${n - 1}`, good: true }, learning_id: `l${n - 1}` },
    },
    {
      event_id: `e${++n}`,
      kbid,
      type: 'processed',
      date,
      audit_metadata: { field: 'file/f', usage: { paragraphs: 3, characters: 40, documents: 1, media: false, processing_seconds: 0.5 } },
    },
  ];
  const count = async (table: string, kbid: string): Promise<number> =>
    Number((await ds.query(`SELECT count(*)::int AS n FROM reporting.${table} WHERE kbid = $1`, [kbid]))[0].n);
  const accountUsage = () =>
    svc.usage.get({ account_id: account, from: date, to: new Date(Date.now() + 3_600_000).toISOString(), aggregation: 'month' });

  beforeAll(async () => {
    ds = await b.open();
    blobs = await createBlobStore({
      driver: 'fs',
      root: blobRoot,
      signingSecret: randomBytes(32).toString('hex'),
      publicBaseUrl: 'http://127.0.0.1:1',
    });
    svc = reportingServices(ds, {
      kbs: new Map([
        [kb, account],
        [kept, account],
      ]),
      limits: new Map(),
      published: [],
    });
    cleanup = new KbCleanupService(ds, blobs, quietLogger, svc.usage);
    for (const e of [...events(kb), ...events(kept)]) await svc.audit.record(e);
    await svc.meter();
    const worker = new RemiWorkerService(ds, { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false }, {} as MessageBus);
    await worker.turn();
    await worker.turn();
    for (const kbid of [kb, kept]) {
      await ds.query(
        `INSERT INTO reporting.activity_downloads (request_id, kbid, event_type, format, query) VALUES ($1, $2, 'chat', 'ndjson', '{}'::jsonb)`,
        [randomUUID(), kbid],
      );
      await blobs.put(`reporting/kbs/${kbid}/activity-downloads/x.ndjson`, Readable.from('{}\n'));
    }
  });

  afterAll(async () => {
    if (ds) await closeServiceDataSource(ds);
    await blobs?.close();
    await b.cleanup();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  it("deletes the KB's activity, scores, chains, downloads and usage rows, keeps the account's counters, and stays deleted", async () => {
    for (const table of TABLES) expect([table, await count(table, kb)]).not.toEqual([table, 0]);
    const before = await accountUsage();
    expect(total(before, 'searches_performed')).toBe(2);
    expect(total(before, 'storage_bytes')).toBe(2000);

    await cleanup.onKbDeleted({ account_id: account, kb_id: kb });
    svc.accounts.kbs.delete(kb);

    for (const table of TABLES) expect([table, await count(table, kb)]).toEqual([table, 0]);
    // The other KB keeps everything.
    for (const table of TABLES) expect([table, await count(table, kept)]).not.toEqual([table, 0]);
    expect(await blobs.exists(`reporting/kbs/${kb}/activity-downloads/x.ndjson`)).toBe(false);
    expect(await blobs.exists(`reporting/kbs/${kept}/activity-downloads/x.ndjson`)).toBe(true);

    // What the account did stays (its month's quota is not handed back); what the KB held is gone.
    const after = await accountUsage();
    for (const name of ['searches_performed', 'answers_generated', 'paragraphs_processed', 'chars_processed', 'pre_processing_time'])
      expect([name, total(after, name)]).toEqual([name, total(before, name)]);
    expect(total(after, 'resources')).toBe(1);
    expect(total(after, 'storage_bytes')).toBe(1000);
    // The deleted KB is no longer the account's.
    await expect(
      svc.usage.get({ account_id: account, kb_id: kb, from: date, aggregation: 'month', to: new Date().toISOString() }),
    ).rejects.toMatchObject({ code: 'KB_NOT_FOUND' });

    // An event still in the bus is not stored again; a redelivered kbDeleted changes nothing.
    await svc.audit.record({ event_id: 'late', kbid: kb, type: 'search', date, details: { query: 'late' } });
    await svc.meter();
    await cleanup.onKbDeleted({ account_id: account, kb_id: kb });
    expect(await count('activity_events', kb)).toBe(0);
    expect(await count('usage_hourly', kb)).toBe(0);
    expect(await accountUsage()).toEqual(after);
  });
});
