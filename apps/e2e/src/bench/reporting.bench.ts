import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, type AuditRecordedEvent, type RpcDef } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import type { MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import { createTestDatabase } from '@kb/platform/testing';
// A micro-benchmark of the reporting service's own statements, run by hand: it needs that code, not the API.
// eslint-disable-next-line @nx/enforce-module-boundaries
import {
  ActivityService,
  AuditService,
  BlockingService,
  ChainSealerService,
  DEFAULT_REPORTING_OPTIONS,
  REPORTING_ENTITIES,
  REPORTING_MIGRATIONS,
  UsageService,
} from '@kb/reporting';
import { percentile } from './ir-metrics';
import { numberArg } from './retrieval.bench';

/**
 * The reporting plane's three targets (issue 19), on each database the service runs on (the
 * machine's PostgreSQL: distributed; PGlite: standalone), through the service's own classes:
 *
 * 1. Audit ingest: `--events` activity events (60 % searches, 20 % answers with their context,
 *    20 % reads) handed to AuditService.record with `--inflight` of them waiting at once (the bus
 *    consumers' concurrency), until stored; then sealed into their hash chains and metered
 *    (ChainSealerService.sealAll, what the service's timer runs). Rate = events / (store + seal):
 *    in the service both run at once on the same cores. Bus delivery is not included.
 * 2. Activity query: `--month-events` search records of one KB in one month (bulk-inserted), then
 *    Query Knowledgebox Activity Logs with two filters (`user_id` and `client_type`), `--runs`
 *    times: a filter pair matching 1 record in 200 (the first page found early) and one matching
 *    none (the whole month read: the worst case).
 * 3. Get Usage: a year of hourly rows (8 784 hours × 11 metrics) of one KB, linked to the account
 *    after them (UsageService.rememberKb adds them to the account's rollup), read back as hourly
 *    buckets, per KB and account-wide, `--runs` times.
 *
 *   npm run bench -- reporting [--backends postgres,pglite] [--events 50000] [--inflight 512]
 *     [--month-events 1000000] [--runs 15]
 */

const KB = '7b0f3f3e-1c5a-4d53-9a39-2f1d1c1e0a11';
const ACCOUNT = '5d2b6c0a-3f1e-4c2d-8a9b-0e1f2a3b4c5d';
const MONTH = '2026-10';

const quietLogger = {
  warn: () => undefined,
  info: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  log: () => undefined,
} as unknown as Logger;

/** The accounts service's two answers, in memory: the KB is the account's, and its limits are all unlimited (no block decided). */
function accountsBus(): MessageBus {
  return {
    request: async (def: RpcDef<unknown, unknown>) => {
      if (def.subject === AccountsSubjects.kbAccount.subject) return { account_id: ACCOUNT };
      if (def.subject === AccountsSubjects.accountQuota.subject) return { found: false };
      throw new Error(`unexpected request ${def.subject}`);
    },
    publish: async () => undefined,
  } as unknown as MessageBus;
}

interface BackendResult {
  backend: string;
  ingest: {
    events: number;
    inflight: number;
    store_s: number;
    seal_s: number;
    stored_per_s: number;
    sealed_per_s: number;
    events_per_s: number;
  };
  activity: { month_events: number; load_s: number; found_p50_ms: number; found_p95_ms: number; none_p50_ms: number; none_p95_ms: number };
  /** `*_cpu_ms`: CPU time of this (the service's) process per read, whatever the machine's load: the driver, parsing and building the buckets. */
  usage: {
    rows: number;
    kb_p50_ms: number;
    kb_p95_ms: number;
    account_p50_ms: number;
    account_p95_ms: number;
    kb_cpu_p50_ms: number;
    account_cpu_p50_ms: number;
  };
}

function eventAt(i: number): AuditRecordedEvent {
  const date = new Date(Date.UTC(2026, 10, 1) + i * 37).toISOString();
  const base = {
    event_id: `bench-${i}`,
    kbid: KB,
    date,
    user_id: `u${i % 50}`,
    user_type: 'nuakey',
    client_type: 'api',
    total_duration: 12,
  };
  if (i % 5 < 3) return { ...base, type: 'search', details: { query: `storm rain ${i}`, resources_count: 10 } };
  if (i % 5 === 3) {
    return {
      ...base,
      type: 'chat',
      details: {
        question: `What does a storm bring ${i}?`,
        answer: 'Rain, wind and thunder.',
        status: 'success',
        learning_id: `l${i}`,
        model: 'extractive',
        retrieved_context: [{ key: 'r/t/b/0-50', text: 'A storm brings rain, wind and thunder over the sea.' }],
      },
    };
  }
  return { ...base, type: 'visited', resource_id: 'r1' };
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const out = await work();
  return [out, (performance.now() - t) / 1000];
}

async function ingest(ds: DataSource, events: number, inflight: number): Promise<BackendResult['ingest']> {
  const usage = new UsageService(ds, accountsBus(), quietLogger);
  const blocking = new BlockingService(ds, accountsBus(), DEFAULT_REPORTING_OPTIONS, quietLogger);
  const audit = new AuditService(ds);
  const sealer = new ChainSealerService(ds, { ...DEFAULT_REPORTING_OPTIONS, chainSealMs: 0 }, usage, blocking);
  await usage.rememberKb(KB, ACCOUNT);
  let next = 0;
  const [, store] = await timed(() =>
    Promise.all(
      Array.from({ length: inflight }, async () => {
        while (next < events) await audit.record(eventAt(next++));
      }),
    ),
  );
  const [, seal] = await timed(() => sealer.sealAll());
  const [{ n }] = (await ds.query(`SELECT count(*)::int AS n FROM reporting.activity_events WHERE chain_seq IS NOT NULL`)) as {
    n: number;
  }[];
  if (n !== events) throw new Error(`${n} of ${events} events sealed`);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    events,
    inflight,
    store_s: r(store),
    seal_s: r(seal),
    stored_per_s: Math.round(events / store),
    sealed_per_s: Math.round(events / seal),
    events_per_s: Math.round(events / (store + seal)),
  };
}

async function activity(ds: DataSource, monthEvents: number, runs: number): Promise<BackendResult['activity']> {
  await ds.query(
    `CREATE TABLE IF NOT EXISTS reporting.activity_events_${MONTH.replace('-', '_')} PARTITION OF reporting.activity_events FOR VALUES FROM ('${MONTH}-01') TO ('2026-11-01')`,
  );
  const clients = `(ARRAY['api','web','chrome_extension','widget'])[1 + i % 4]`;
  const [, load] = await timed(async () => {
    for (let from = 0; from < monthEvents; from += 100_000) {
      const to = Math.min(monthEvents, from + 100_000) - 1;
      await ds.query(
        `INSERT INTO reporting.activity_events (event_id, kbid, type, date, user_id, user_type, client_type, total_duration, details)
         SELECT 'm' || i, $1::uuid, 'search', timestamptz '${MONTH}-01' + (i * (interval '31 days' / $4::int)), 'u' || ((i / 4) % 50), 'nuakey', ${clients}, 10, jsonb_build_object('query', 'q' || i, 'resources_count', 3)
           FROM generate_series($2::int, $3::int) AS i`,
        [KB, from, to, monthEvents],
      );
    }
    await ds.query(`ANALYZE reporting.activity_events`);
  });
  const service = new ActivityService(ds, DEFAULT_REPORTING_OPTIONS);
  const query = async (filters: Record<string, unknown>, expectRecords: boolean): Promise<number> => {
    const t = performance.now();
    let records = 0;
    for await (const item of service.query({
      kbid: KB,
      event_type: 'search',
      body: { year_month: MONTH, show: ['id', 'date', 'question', 'user_id', 'client_type'], filters, pagination: { limit: 100 } },
    })) {
      if (item.type === 'record') records++;
    }
    if (records > 0 !== expectRecords) throw new Error(`the two filters found ${records} records`);
    return performance.now() - t;
  };
  const found: number[] = [];
  const none: number[] = [];
  for (let i = 0; i < runs; i++) {
    found.push(await query({ user_id: { eq: 'u8' }, client_type: { eq: 'web' } }, true));
    none.push(await query({ user_id: { eq: 'u8' }, client_type: { eq: 'nobody' } }, false));
  }
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    month_events: monthEvents,
    load_s: r(load),
    found_p50_ms: r(percentile(found, 50)),
    found_p95_ms: r(percentile(found, 95)),
    none_p50_ms: r(percentile(none, 50)),
    none_p95_ms: r(percentile(none, 95)),
  };
}

async function usage(ds: DataSource, runs: number): Promise<BackendResult['usage']> {
  const kb = '0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5';
  await ds.query(
    `INSERT INTO reporting.usage_hourly (kbid, hour, metric, value)
     SELECT $1::uuid, h, m, 1 + (extract(hour FROM h AT TIME ZONE 'UTC')::int % 7)
       FROM generate_series(timestamptz '2024-01-01T00:00:00Z', timestamptz '2024-12-31T23:00:00Z', interval '1 hour') AS h,
            unnest(ARRAY['paragraphs_processed','chars_processed','docs_no_media_processed','media_seconds_processed','non_media_files_processed','paragraphs_stored',
                         'searches_performed','answers_generated','pre_processing_time','storage_bytes','resources']) AS m`,
    [kb],
  );
  const service = new UsageService(ds, accountsBus(), quietLogger);
  // The KB's account learnt after its rows (as a KB's whose events were sealed first): linking it adds them to the account's.
  await service.rememberKb(kb, ACCOUNT);
  await ds.query(`ANALYZE reporting.usage_hourly`);
  await ds.query(`ANALYZE reporting.usage_hourly_accounts`);
  const [{ n: rows }] = (await ds.query(`SELECT count(*)::int AS n FROM reporting.usage_hourly WHERE kbid = $1`, [kb])) as { n: number }[];
  const cpu: Record<string, number[]> = { kb: [], account: [] };
  const read = async (kbId?: string): Promise<number> => {
    const t = performance.now();
    const c = process.cpuUsage();
    const buckets = await service.get({
      account_id: ACCOUNT,
      ...(kbId ? { kb_id: kbId } : {}),
      from: '2024-01-01T00:00:00Z',
      to: '2024-12-31T23:59:59Z',
      aggregation: 'hour',
    });
    const used = process.cpuUsage(c);
    cpu[kbId ? 'kb' : 'account']?.push((used.user + used.system) / 1000);
    if (buckets.length !== 8784) throw new Error(`${buckets.length} buckets`);
    if (buckets[5]?.metrics.find((m) => m.name === 'searches_performed')?.value !== 6) throw new Error('a bucket read back wrong');
    return performance.now() - t;
  };
  const perKb: number[] = [];
  const account: number[] = [];
  for (let i = 0; i < runs; i++) {
    perKb.push(await read(kb));
    account.push(await read());
  }
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    rows,
    kb_p50_ms: r(percentile(perKb, 50)),
    kb_p95_ms: r(percentile(perKb, 95)),
    account_p50_ms: r(percentile(account, 50)),
    account_p95_ms: r(percentile(account, 95)),
    kb_cpu_p50_ms: r(percentile(cpu['kb'] ?? [], 50)),
    account_cpu_p50_ms: r(percentile(cpu['account'] ?? [], 50)),
  };
}

async function openBackend(name: string): Promise<{ ds: DataSource; close: () => Promise<void> }> {
  if (name === 'postgres') {
    const db = await createTestDatabase('reporting_bench');
    const ds = await createServiceDataSource({
      service: 'reporting',
      schema: 'reporting',
      url: db.url,
      entities: REPORTING_ENTITIES,
      migrations: REPORTING_MIGRATIONS,
      runMigrations: true,
    });
    return {
      ds,
      close: async () => {
        await closeServiceDataSource(ds);
        await db.drop();
      },
    };
  }
  if (name === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-reporting-bench-'));
    const ds = await createServiceDataSource({
      service: 'reporting',
      schema: 'reporting',
      entities: REPORTING_ENTITIES,
      migrations: REPORTING_MIGRATIONS,
      dataDir,
      runMigrations: true,
    });
    return {
      ds,
      close: async () => {
        await closeServiceDataSource(ds);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`--backends: ${name} is neither postgres nor pglite`);
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      backends: { type: 'string', default: 'postgres,pglite' },
      events: { type: 'string', default: '50000' },
      inflight: { type: 'string', default: '512' },
      'month-events': { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '15' },
    },
  });
  const o = {
    events: numberArg('events', a.events) ?? 50_000,
    inflight: numberArg('inflight', a.inflight) ?? 512,
    monthEvents: numberArg('month-events', a['month-events']) ?? 1_000_000,
    runs: numberArg('runs', a.runs) ?? 15,
  };
  const results: BackendResult[] = [];
  for (const backend of String(a.backends)
    .split(',')
    .map((s) => s.trim())) {
    console.log(`== ${backend} ==`);
    const { ds, close } = await openBackend(backend);
    try {
      const i = await ingest(ds, o.events, o.inflight);
      console.log('ingest', i);
      const u = await usage(ds, o.runs);
      console.log('usage', u);
      const q = await activity(ds, o.monthEvents, o.runs);
      console.log('activity', q);
      results.push({ backend, ingest: i, activity: q, usage: u });
    } finally {
      await close();
    }
  }
  console.log(
    '\n| backend | ingest events/s (store / seal+meter) | activity query, 2 filters, p50 (p95) ms: found / none | Get Usage, year of hours, p50 (p95) ms: KB / account |',
  );
  console.log('|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.backend} | ${r.ingest.events_per_s} (${r.ingest.stored_per_s} / ${r.ingest.sealed_per_s}) | ${r.activity.found_p50_ms} (${r.activity.found_p95_ms}) / ${r.activity.none_p50_ms} (${r.activity.none_p95_ms}) over ${r.activity.month_events} | ${r.usage.kb_p50_ms} (${r.usage.kb_p95_ms}) / ${r.usage.account_p50_ms} (${r.usage.account_p95_ms}) |`,
    );
  }
  mkdirSync('tmp/bench', { recursive: true });
  writeFileSync('tmp/bench/reporting.json', JSON.stringify({ options: o, results }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
