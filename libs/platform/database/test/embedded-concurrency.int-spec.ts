import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { closeServiceDataSource, createServiceDataSource, startEmbeddedPostgres, withTransaction } from '../src';
import { embeddedConnection } from '../src/embedded/embedded-postgres';
import { tempDataDir } from './fixtures/backends.fixture';
import { notesFixture, uniqueSchema, type NotesFixture } from './fixtures/notes.fixture';

// PGlite opens in 1-3 s (a fresh data directory runs initdb); the workspace default is 5 s.
jest.setTimeout(30_000);

/*
 * All socket connections to PGlite share ONE session. These tests pin down what the library
 * promises anyway: two services' pools on one embedded instance neither deadlock nor see each
 * other's half-finished work.
 */
describe('two DataSources on one embedded PostgreSQL', () => {
  const dir = tempDataDir('concurrency');
  const a: NotesFixture = notesFixture(uniqueSchema('svc_a'));
  const b: NotesFixture = notesFixture(uniqueSchema('svc_b'));
  let dsA: DataSource;
  let dsB: DataSource;

  beforeAll(async () => {
    const open = (f: NotesFixture, service: string) =>
      createServiceDataSource({
        service,
        schema: f.schema,
        entities: f.entities,
        migrations: f.migrations,
        dataDir: dir.dataDir,
        runMigrations: true,
        poolSize: 4,
      });
    [dsA, dsB] = await Promise.all([open(a, 'svc-a'), open(b, 'svc-b')]);
  });

  afterAll(async () => {
    await closeServiceDataSource(dsA);
    await closeServiceDataSource(dsB);
    dir.remove();
  });

  it('share one instance: the same URL, no second startup', async () => {
    const joined = await startEmbeddedPostgres({ dataDir: dir.dataDir });
    try {
      expect(joined.startupMs).toBe(0);
      // Both connect where the instance listens (its Unix socket's directory, or its TCP host and port).
      const where = (ds: DataSource) => (({ host, port }) => ({ host, port }))(ds.options as { host?: string; port?: number });
      const { host, port } = embeddedConnection(joined.url);
      expect(where(dsA)).toEqual({ host, port });
      expect(where(dsB)).toEqual({ host, port });
    } finally {
      await joined.stop();
    }
    // Releasing one handle leaves the others working.
    expect(await dsA.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a transaction awaiting timers and another pool reading concurrently both finish', async () => {
    const notesA = dsA.getRepository(a.NoteEntity);
    const notesB = dsB.getRepository(b.NoteEntity);
    await notesB.insert({ slug: 'b-seed', body: 'seed' });

    const events: string[] = [];
    const transaction = withTransaction(dsA, async (manager) => {
      const repo = manager.getRepository(a.NoteEntity);
      await repo.insert({ slug: 'tx-1', body: 'first' });
      events.push('tx: first insert');
      await sleep(150);
      await repo.insert({ slug: 'tx-2', body: 'second' });
      await sleep(50);
      events.push('tx: commit');
    });
    const reads = (async () => {
      await sleep(20);
      const counts: number[] = [];
      for (let i = 0; i < 10; i++) counts.push(await notesB.countBy({ slug: 'b-seed' }));
      // Uncommitted rows of the other service's transaction are never visible from outside it.
      const seenFromOutside = await notesA.countBy({ slug: 'tx-1' });
      events.push('reads: done');
      return { counts, seenFromOutside };
    })();

    const [, result] = await Promise.all([transaction, reads]);
    expect(result.counts).toEqual(Array(10).fill(1));
    expect(await notesA.countBy({ slug: 'tx-1' })).toBe(1);
    expect(await notesA.countBy({ slug: 'tx-2' })).toBe(1);
    // PGlite runs one session: the other pool waits for the transaction instead of joining it.
    expect(events).toEqual(['tx: first insert', 'tx: commit', 'reads: done']);
    expect(result.seenFromOutside).toBe(1);
  });

  it("another pool's writes survive a concurrent transaction that rolls back", async () => {
    const notesA = dsA.getRepository(a.NoteEntity);
    const notesB = dsB.getRepository(b.NoteEntity);

    const failing = withTransaction(dsA, async (manager) => {
      await manager.getRepository(a.NoteEntity).insert({ slug: 'doomed', body: 'x' });
      await sleep(100);
      throw new Error('abort');
    });
    const writes = (async () => {
      await sleep(10);
      for (let i = 0; i < 5; i++) await notesB.insert({ slug: `survivor-${i}`, body: 'kept' });
    })();

    await expect(failing).rejects.toThrow('abort');
    await writes;
    expect(await notesA.countBy({ slug: 'doomed' })).toBe(0);
    expect(await notesB.countBy({ body: 'kept' })).toBe(5);
  });

  it('keeps large parameterised statements of concurrent connections apart', async () => {
    // Parameters this large arrive in several TCP chunks; without the session guard another
    // connection's Parse lands between this one's Parse and Bind (see pglite-session-guard.ts).
    const big = 'x'.repeat(1_500_000);
    const notesA = dsA.getRepository(a.NoteEntity);
    const tasks: Array<Promise<void>> = [];
    for (let i = 0; i < 6; i++) {
      tasks.push(
        notesA.insert({ slug: `big-${i}`, body: big }).then(() => undefined),
        ...Array.from({ length: 5 }, (_, j) =>
          dsB.query('SELECT $1::int + 1 AS next', [i * 10 + j]).then((rows: Array<{ next: number }>) => {
            expect(rows).toEqual([{ next: i * 10 + j + 1 }]);
          }),
        ),
      );
    }
    await Promise.all(tasks);

    const [{ count, shortest }] = await dsA.query(
      `SELECT count(*)::int AS count, min(length(body))::int AS shortest FROM "${a.schema}"."notes" WHERE slug LIKE 'big-%'`,
    );
    expect({ count, shortest }).toEqual({ count: 6, shortest: big.length });
  });
});
