import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { AccountsSubjects, type KbEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { InProcessMessageBus, MemoryQueueStore, silentLogger, type MessageBus } from '@kb/platform/messaging';
import { createLogger } from '@kb/platform/observability';
import { createTestDatabase, eventually, type TestDatabase } from '@kb/platform/testing';
import { TransactionalOutbox, outboxTableSql } from '../src';

class ShopOutbox1700000000000 implements MigrationInterface {
  name = 'ShopOutbox1700000000000';
  async up(q: QueryRunner): Promise<void> {
    for (const sql of outboxTableSql('shop')) await q.query(sql);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE shop.outbox');
  }
}

/** The bus as seen by an outbox whose publishes fail while `down` is set. */
function flaky(bus: MessageBus, state: { down: boolean }): MessageBus {
  return new Proxy(bus, {
    get(target, prop, receiver) {
      if (prop === 'publish')
        return async (...args: Parameters<MessageBus['publish']>) =>
          state.down ? Promise.reject(new Error('bus down')) : target.publish(...args);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const entry = (kb_id: string) => ({ kind: 'event', target: AccountsSubjects.kbDeleted.subject, payload: { account_id: 'a', kb_id } });

/** The same behaviour on PostgreSQL and on the embedded PGlite of the standalone. */
describe.each(['postgres', 'pglite'] as const)('TransactionalOutbox (%s)', (engine) => {
  let db: TestDatabase | undefined;
  let pgDir: string | undefined;
  let ds: DataSource;
  let bus: InProcessMessageBus;
  const state = { down: false };
  let outbox: TransactionalOutbox;
  const received: { kb: string; id: string }[] = [];

  beforeAll(async () => {
    const common = { service: 'shop', schema: 'shop', entities: [], migrations: [ShopOutbox1700000000000], runMigrations: true };
    if (engine === 'postgres') {
      db = await createTestDatabase('outbox');
      ds = await createServiceDataSource({ ...common, url: db.url });
    } else {
      pgDir = mkdtempSync(join(tmpdir(), 'kb-outbox-'));
      ds = await createServiceDataSource({ ...common, dataDir: pgDir });
    }
    bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
    await bus.subscribe(AccountsSubjects.kbDeleted, async (e: KbEvent, meta) => void received.push({ kb: e.kb_id, id: meta.id }), {
      durable: 'watch',
    });
    outbox = new TransactionalOutbox({
      dataSource: ds,
      schema: 'shop',
      bus: flaky(bus, state),
      logger: createLogger({ service: 'test', level: 'silent' }),
      sweepMs: 100,
      firstRetryMs: 0,
    });
  });

  afterAll(async () => {
    await outbox?.stop();
    await bus?.close();
    if (ds) await closeServiceDataSource(ds);
    await db?.drop();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  });

  const rows = async (): Promise<{ id: string; payload: { kb_id: string } }[]> =>
    ds.query('SELECT id, payload FROM shop.outbox ORDER BY created_at');

  it('relays committed rows in order with their row id as message id, and deletes them', async () => {
    const written = await ds.transaction((m) => outbox.add(m, [entry('kb-1'), entry('kb-2')]));
    await outbox.relay(written);
    expect(await rows()).toEqual([]);
    await eventually(async () => (received.length >= 2 ? true : undefined), 5_000, 'two events');
    expect(received.slice(0, 2)).toEqual([
      { kb: 'kb-1', id: written[0]!.id },
      { kb: 'kb-2', id: written[1]!.id },
    ]);
  });

  it('stores nothing for a transaction that rolls back', async () => {
    await expect(
      ds.transaction(async (m) => {
        await outbox.add(m, [entry('kb-rolled-back')]);
        throw new Error('write refused');
      }),
    ).rejects.toThrow('write refused');
    expect(await rows()).toEqual([]);
  });

  it('keeps a row whose publish failed, and the sweep publishes it once the bus is back', async () => {
    state.down = true;
    const written = await ds.transaction((m) => outbox.add(m, [entry('kb-later')]));
    await outbox.relay(written);
    expect((await rows()).map((r) => r.payload.kb_id)).toEqual(['kb-later']);
    state.down = false;
    outbox.start();
    await eventually(async () => (received.some((r) => r.kb === 'kb-later') ? true : undefined), 10_000, 'the swept event');
    expect(received.find((r) => r.kb === 'kb-later')?.id).toBe(written[0]!.id);
    await eventually(async () => ((await rows()).length === 0 ? true : undefined), 5_000, 'the swept row to be deleted');
  });

  it('stop() waits for relays under way (a shutdown flushes them)', async () => {
    const written = await ds.transaction((m) => outbox.add(m, [entry('kb-flushed')]));
    outbox.relayInBackground(written);
    await outbox.stop();
    expect(await rows()).toEqual([]);
    await eventually(async () => (received.some((r) => r.kb === 'kb-flushed') ? true : undefined), 5_000, 'the flushed event');
  });
});

describe('outboxTableSql', () => {
  it('refuses names that are not plain identifiers (they are written into SQL)', () => {
    expect(() => outboxTableSql('shop; DROP TABLE x')).toThrow('Invalid outbox schema name');
    expect(() => outboxTableSql('shop', ["x') OR true --"])).toThrow('Invalid outbox kind');
    expect(outboxTableSql('shop', ['event', 'blob_cleanup'])[0]).toContain("CHECK (kind IN ('event', 'blob_cleanup'))");
  });
});
