import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Client } from 'pg';
import { closeServiceDataSource, createServiceDataSource, pgliteServerMain, runningEmbeddedDataDirs, startEmbeddedPostgres } from '../src';
import { tempDataDir } from './fixtures/backends.fixture';
import { notesFixture, uniqueSchema } from './fixtures/notes.fixture';

// PGlite opens in 1-3 s (a fresh data directory runs initdb); the workspace default is 5 s.
// Each test starts PGlite (and one a child process) several times: 30 s was passed on a loaded 2-core machine.
jest.setTimeout(120_000);

async function selectOne(url: string): Promise<unknown> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT 1 AS one')).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL lifecycle', () => {
  const dir = tempDataDir('persist');
  afterAll(() => dir.remove());

  it('sets shared_buffers and random_page_cost when asked (EMBEDDED_DB_SHARED_BUFFERS, EMBEDDED_DB_RANDOM_PAGE_COST) and refuses values it cannot take', async () => {
    const own = tempDataDir('buffers');
    try {
      const pg = await startEmbeddedPostgres({ dataDir: own.dataDir, sharedBuffers: '48MB', randomPageCost: 1.1 });
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      try {
        expect((await client.query('SHOW shared_buffers')).rows).toEqual([{ shared_buffers: '48MB' }]);
        expect((await client.query('SHOW random_page_cost')).rows).toEqual([{ random_page_cost: '1.1' }]);
      } finally {
        await client.end();
        await pg.stop();
      }
      for (const bad of ['2GB', 'lots', '0MB', '512 mb']) {
        await expect(startEmbeddedPostgres({ dataDir: own.dataDir, sharedBuffers: bad })).rejects.toThrow(
          /EMBEDDED_DB_SHARED_BUFFERS .*between 1MB and 1536MB/,
        );
      }
      for (const bad of ['0', '-1', 'cheap', '1e9']) {
        process.env['EMBEDDED_DB_RANDOM_PAGE_COST'] = bad;
        try {
          await expect(startEmbeddedPostgres({ dataDir: own.dataDir })).rejects.toThrow(/EMBEDDED_DB_RANDOM_PAGE_COST .*above 0/);
        } finally {
          delete process.env['EMBEDDED_DB_RANDOM_PAGE_COST'];
        }
      }
      expect(runningEmbeddedDataDirs()).not.toContain(own.dataDir);
    } finally {
      own.remove();
    }
  });

  it('writes the time spent per statement when asked (EMBEDDED_DB_STATEMENT_STATS)', async () => {
    const own = tempDataDir('stats');
    const file = join(own.dataDir, '..', `${basename(own.dataDir)}-statements.txt`);
    try {
      const pg = await startEmbeddedPostgres({ dataDir: own.dataDir, statementStats: file });
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      try {
        await client.query('CREATE TABLE t (id int PRIMARY KEY, v text)');
        for (let i = 0; i < 5; i++) await client.query('INSERT INTO t (id, v) VALUES ($1, $2)', [i, `row ${i}`]);
        await client.query('SELECT   count(*)\n  FROM t');
      } finally {
        await client.end();
        await pg.stop();
      }
      const report = readFileSync(file, 'utf8');
      expect(report).toMatch(/^PGlite busy \d+ ms in all\n/);
      const line = (statement: string) => report.split('\n').find((l) => l.endsWith(`  ${statement}`));
      // Parameterised statements (Parse … Sync) are counted once each; simple queries too.
      expect(line('INSERT INTO t (id, v) VALUES ($1, $2)')).toMatch(/^\s*\d+\s+[\d.]+ %\s+5\s+[\d.]+ {2}/);
      expect(line('CREATE TABLE t (id int PRIMARY KEY, v text)')).toMatch(/\s1\s+[\d.]+ {2}CREATE/);
      expect(line('SELECT count(*) FROM t')).toBeDefined();
    } finally {
      rmSync(file, { force: true });
      own.remove();
    }
  });

  it('keeps data in the data directory across stop and reopen', async () => {
    const fixture = notesFixture(uniqueSchema());
    const options = {
      service: 'notes',
      schema: fixture.schema,
      entities: fixture.entities,
      migrations: fixture.migrations,
      dataDir: dir.dataDir,
      runMigrations: true,
    };

    const first = await createServiceDataSource(options);
    await first.getRepository(fixture.NoteEntity).insert({ slug: 'persisted', body: 'still here' });
    await closeServiceDataSource(first);
    expect(runningEmbeddedDataDirs()).not.toContain(dir.dataDir);
    expect(existsSync(`${dir.dataDir}.lock`)).toBe(false);

    const reopened = await startEmbeddedPostgres({ dataDir: dir.dataDir });
    // The measured reopen time lands in the test output for docs/benchmarks.
    process.stdout.write(`PGlite reopen of a persisted dataDir: ${reopened.startupMs} ms\n`);
    const second = await createServiceDataSource(options);
    try {
      expect(await second.getRepository(fixture.NoteEntity).findOneBy({ slug: 'persisted' })).toMatchObject({
        body: 'still here',
      });
    } finally {
      await closeServiceDataSource(second);
      await reopened.stop();
    }
  });

  it("serves the process's own DataSources over a Unix socket in a private directory, removed on close", async () => {
    const fixture = notesFixture(uniqueSchema());
    const own = tempDataDir('unix');
    const ds = await createServiceDataSource({
      service: 'notes',
      schema: fixture.schema,
      entities: fixture.entities,
      migrations: fixture.migrations,
      dataDir: own.dataDir,
    });
    let socketDir = '';
    try {
      socketDir = (ds.driver.options as { host?: string }).host ?? '';
      expect(socketDir).toMatch(/^\//);
      expect(statSync(socketDir).mode & 0o777).toBe(0o700);
      expect(readdirSync(socketDir)).toEqual(['.s.PGSQL.5432']);
      // A second caller of the same dataDir joins it; its URL reaches it with the plain pg driver.
      const joined = await startEmbeddedPostgres({ dataDir: own.dataDir });
      try {
        expect(joined.url).toBe(`postgres://postgres@${encodeURIComponent(socketDir)}:5432/postgres`);
        expect(await selectOne(joined.url)).toEqual([{ one: 1 }]);
      } finally {
        await joined.stop();
      }
    } finally {
      await closeServiceDataSource(ds);
      own.remove();
    }
    expect(existsSync(socketDir)).toBe(false);
  });

  it('refuses a data directory locked by another live process and takes over a stale lock', async () => {
    const other = tempDataDir('locked');
    try {
      mkdirSync(other.dataDir, { recursive: true });
      writeFileSync(`${other.dataDir}.lock`, String(process.ppid));
      await expect(startEmbeddedPostgres({ dataDir: other.dataDir })).rejects.toThrow(/in use by process/);
      expect(runningEmbeddedDataDirs()).not.toContain(other.dataDir);

      writeFileSync(`${other.dataDir}.lock`, '2147483646');
      const pg = await startEmbeddedPostgres({ dataDir: other.dataDir });
      await pg.stop();
    } finally {
      other.remove();
    }
  });

  it('serves a data directory from the pglite-server entry until asked to stop', async () => {
    const lines: string[] = [];
    let stop: (reason: string) => void = () => undefined;
    const until = new Promise<string>((resolve) => (stop = resolve));
    const serving = pgliteServerMain({
      env: { PGLITE_DATA_DIR: `memory://cli-${process.pid}`, PGLITE_PORT: '0' },
      log: (line) => lines.push(line),
      until,
    });

    while (lines.length === 0) await new Promise((r) => setTimeout(r, 20));
    const announced = JSON.parse(lines[0] as string) as { msg: string; url: string };
    expect(announced.msg).toBe('pglite listening');
    expect(announced.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(await selectOne(announced.url)).toEqual([{ one: 1 }]);

    stop('SIGTERM');
    await serving;
    expect(JSON.parse(lines[1] as string)).toMatchObject({ msg: 'pglite stopped', reason: 'SIGTERM' });
  });
});
