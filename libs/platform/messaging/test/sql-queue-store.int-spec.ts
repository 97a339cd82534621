import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { CreateBusSchema1760000000000 } from '../src/inprocess/bus-schema.migration';
import { InProcessMessageBus } from '../src/inprocess/in-process-bus';
import { QUEUE_CONSUMER, type ClaimedJob, type NewMessage, type QueueStore } from '../src/inprocess/queue-store';
import { pgExecutor, SqlQueueStore, type SqlExecutor } from '../src/inprocess/sql-queue-store';
import { silentLogger } from '../src/shared/bus-logger';
import { queue } from '@kb/contracts';
import { PG_URL, runId, waitFor } from './bus-harness';

const message = (subject: string, i: number, dedupKey?: string): NewMessage => ({
  msgId: `m${i}`,
  subject,
  body: JSON.stringify({ i }),
  context: { requestId: `r${i}` },
  dedupKey,
});

/** Behaviour every SQL backend must show; run on the server (pg and TypeORM) and on PGlite. */
async function exerciseStore(store: QueueStore): Promise<void> {
  await store.init();
  await store.init();
  expect(await store.insertJob(message('s.q', 1, 'k1'))).toBe(true);
  expect(await store.insertJob(message('s.q', 2, 'k1'))).toBe(false);
  await store.registerConsumer('s.e', 'a');
  await store.registerConsumer('s.e', 'b');
  await store.registerConsumer('s.e', 'a');
  expect(await store.insertFanout(message('s.e', 3))).toBe(2);

  const key = (k: { subject: string; consumer: string }) => `${k.subject}|${k.consumer}`;
  expect((await store.due()).map(key).sort()).toEqual(['s.e|a', 's.e|b', `s.q|${QUEUE_CONSUMER}`]);
  const [job] = await store.claim({ subject: 's.q', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 't1' });
  // A claimed row under its lease is not due; the other consumers' rows still are.
  expect((await store.due()).map(key).sort()).toEqual(['s.e|a', 's.e|b']);
  expect(job).toMatchObject({ msgId: 'm1', body: '{"i":1}', context: { requestId: 'r1' }, deliveryCount: 1 });
  expect(await store.claim({ subject: 's.q', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 't2' })).toEqual([]);
  expect(await store.release(job!.id, 'wrong-token', 0, null)).toBe(false);
  expect(await store.release(job!.id, 't1', 0, { code: 'X', message: 'x' })).toBe(true);
  const [again] = await store.claim({ subject: 's.q', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 't3' });
  expect(again?.deliveryCount).toBe(2);
  expect(await store.bury(again!.id, 't3', { code: 'DEAD', message: 'gave up' })).toBe(true);
  expect(await store.deadJobs('s.q')).toEqual([
    expect.objectContaining({ msgId: 'm1', deliveryCount: 2, error: { code: 'DEAD', message: 'gave up' } }),
  ]);

  const forA = await store.claim({ subject: 's.e', consumer: 'a', limit: 5, leaseMs: 1, token: 'ta' });
  expect(forA.map((j) => j.msgId)).toEqual(['m3']);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect((await store.due()).map(key)).toContain('s.e|a');
  // The 1 ms lease ran out: the row is claimable again, and the stale token can no longer ack it.
  const retaken = await store.claim({ subject: 's.e', consumer: 'a', limit: 5, leaseMs: 60_000, token: 'ta2' });
  expect(retaken[0]?.deliveryCount).toBe(2);
  expect(await store.ack(forA[0]!.id, 'ta')).toBe(false);
  expect(await store.ack(retaken[0]!.id, 'ta2')).toBe(true);
  await store.purgeDone(0);

  // Concurrent calls share one statement (group commit); each caller still gets its own answer.
  const inserted = await Promise.all(
    [1, 2, 3, 4].map((i) => store.insertJob(message('s.b', 10 + i, i === 3 ? 'kb1' : i === 4 ? 'kb1' : undefined))),
  );
  expect(inserted).toEqual([true, true, true, false]);
  const copies = await Promise.all([
    store.insertFanout(message('s.e', 20, 'ke')),
    store.insertFanout(message('s.e', 21, 'ke')),
    store.insertFanout(message('s.none', 22)),
  ]);
  expect(copies).toEqual([2, 0, 0]);
  const batch = await store.claim({ subject: 's.b', consumer: QUEUE_CONSUMER, limit: 10, leaseMs: 60_000, token: 'tb' });
  expect(batch.map((j) => j.msgId)).toEqual(['m11', 'm12', 'm13']);
  const acks = await Promise.all([...batch.map((j) => store.ack(j.id, 'tb')), store.ack(batch[0]!.id, 'tb')]);
  expect(acks).toEqual([true, true, true, false]);
  expect(await store.claim({ subject: 's.b', consumer: QUEUE_CONSUMER, limit: 10, leaseMs: 60_000, token: 'tc' })).toEqual([]);

  // Claims of several workers share one statement; a pair claimed twice in it gets the next rows.
  for (let i = 0; i < 4; i++) await store.insertJob(message('s.c', 30 + i));
  await store.registerConsumer('s.f', 'x');
  expect(await store.insertFanout(message('s.f', 40))).toBe(1);
  const claims = await Promise.all([
    store.claim({ subject: 's.c', consumer: QUEUE_CONSUMER, limit: 2, leaseMs: 200, token: 'c1' }),
    store.claim({ subject: 's.c', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 'c2' }),
    store.claim({ subject: 's.f', consumer: 'x', limit: 5, leaseMs: 60_000, token: 'c1' }),
    store.claim({ subject: 's.none', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 'c4' }),
    store.claim({ subject: 's.c', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 'c5' }),
  ]);
  expect(claims.map((jobs) => jobs.map((j) => `${j.msgId}:${j.token}`))).toEqual([
    ['m30:c1', 'm31:c1'],
    ['m32:c2', 'm33:c2'],
    ['m40:c1'],
    [],
    [],
  ]);
  const [[c30, c31], [c32], [f40]] = claims as ClaimedJob[][] as [ClaimedJob[], ClaimedJob[], ClaimedJob[]];
  // Renewals share one statement too; each answers for its own row and token.
  expect(await store.ack(c32!.id, 'c2')).toBe(true);
  const renewed = await Promise.all([
    store.extend(c30!.id, 'c1', 60_000),
    store.extend(c31!.id, 'c1', 60_000),
    store.extend(c30!.id, 'c1', 60_000),
    store.extend(c31!.id, 'c2', 60_000),
    store.extend(c32!.id, 'c2', 60_000),
    store.extend(f40!.id, 'c1', 60_000),
  ]);
  expect(renewed).toEqual([true, true, true, false, false, true]);
  // The 200 ms leases were renewed for a minute: past 200 ms the rows are still not due.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await store.claim({ subject: 's.c', consumer: QUEUE_CONSUMER, limit: 5, leaseMs: 60_000, token: 'c6' })).toEqual([]);
}

describe('SqlQueueStore', () => {
  describe('on PostgreSQL through pg', () => {
    const pools: Pool[] = [];
    const schema = `bus_${runId().slice(0, -1)}`;
    const pool = () => {
      const p = new Pool({ connectionString: PG_URL, max: 3 });
      pools.push(p);
      return p;
    };
    afterAll(async () => {
      await new SqlQueueStore(pgExecutor(pools[0]!), { schema }).dropSchema();
      await Promise.all(pools.map((p) => p.end()));
    });

    it('stores, claims, releases, buries and acknowledges', async () => {
      await exerciseStore(new SqlQueueStore(pgExecutor(pool()), { schema }));
    });

    it('never hands one row to two processes claiming at the same time', async () => {
      const a = new SqlQueueStore(pgExecutor(pool()), { schema });
      const b = new SqlQueueStore(pgExecutor(pool()), { schema });
      for (let i = 0; i < 60; i++) await a.insertJob(message('race.q', i));
      const claimed: string[] = [];
      const drain = async (store: SqlQueueStore, token: string) => {
        for (;;) {
          const jobs = await store.claim({ subject: 'race.q', consumer: QUEUE_CONSUMER, limit: 3, leaseMs: 60_000, token });
          if (jobs.length === 0) return;
          claimed.push(...jobs.map((j) => j.msgId));
        }
      };
      await Promise.all([drain(a, 'a1'), drain(b, 'b1'), drain(a, 'a2'), drain(b, 'b2')]);
      expect(claimed).toHaveLength(60);
      expect(new Set(claimed).size).toBe(60);
    });
  });

  describe('on a TypeORM DataSource, with the migration', () => {
    const schema = `bus_${runId().slice(0, -1)}`;
    const dataSource = new DataSource({ type: 'postgres', url: PG_URL });
    beforeAll(async () => {
      await dataSource.initialize();
      const runner = dataSource.createQueryRunner();
      await new CreateBusSchema1760000000000(schema).up(runner);
      await runner.release();
    });
    afterAll(async () => {
      const runner = dataSource.createQueryRunner();
      await new CreateBusSchema1760000000000(schema).down(runner);
      await runner.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await runner.release();
      await dataSource.destroy();
    });

    it('works with the DataSource as executor over migration-made tables', async () => {
      await exerciseStore(new SqlQueueStore(dataSource, { schema, createSchema: false }));
    });
  });

  describe('on PGlite through pglite-socket (the embedded path)', () => {
    let child: ChildProcess;
    let pool: Pool;
    let db: SqlExecutor;
    beforeAll(async () => {
      ({ child, pool } = await startPglite());
      db = pgExecutor(pool);
      // PGlite's initdb alone took 40 s on the shared machine at load 18.
    }, 120_000);
    afterAll(async () => {
      await pool.end();
      child.stdin?.end();
      await new Promise((resolve) => child.once('exit', resolve));
    });

    it('runs the same SQL', async () => {
      await exerciseStore(new SqlQueueStore(db, { schema: 'bus' }));
    });

    it('carries a bus: jobs enqueued before a restart are consumed after it', async () => {
      const store = new SqlQueueStore(db, { schema: 'bus_restart' });
      const def = queue<{ n: number }>('pglite.job.run', 'PROCESSING');
      const first = new InProcessMessageBus({ store, logger: silentLogger });
      for (let n = 0; n < 5; n++) await first.enqueue(def, { n });
      await first.close();
      const second = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50 });
      const got: number[] = [];
      await second.consume(def, async ({ n }) => void got.push(n), { durable: 'w' });
      await waitFor(() => got.length === 5);
      await second.close();
      expect(got.sort()).toEqual([0, 1, 2, 3, 4]);
    });
  });
});

/**
 * PGlite needs dynamic ESM imports that jest's VM cannot do, so it runs in a child process behind
 * its socket server, exactly as the embedded deployment reaches it (one shared session).
 */
async function startPglite(): Promise<{ child: ChildProcess; pool: Pool }> {
  const script = `
    const { PGlite } = require('@electric-sql/pglite');
    const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');
    (async () => {
      const db = await PGlite.create();
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 8 });
      await server.start();
      process.stdout.write('READY ' + server.getServerConn() + '\\n');
      process.stdin.on('end', async () => { await server.stop(); await db.close(); process.exit(0); });
      process.stdin.resume();
    })().catch((err) => { console.error(err); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: join(__dirname, '../../../..'), stdio: ['pipe', 'pipe', 'inherit'] });
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`PGlite exited with ${code}`)));
  });
  return { child, pool: new Pool({ connectionString: `postgres://postgres@${address}/postgres`, max: 4 }) };
}
