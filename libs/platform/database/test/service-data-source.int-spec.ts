import { DomainError } from '@kb/contracts';
import { QueryFailedError, type DataSource } from 'typeorm';
import {
  closeServiceDataSource,
  createServiceDataSource,
  dbHealthCheck,
  migrateCommand,
  revertLastMigration,
  runServiceMigrations,
  translateUniqueViolation,
  withTransaction,
  insertStatement,
  type InsertPart,
} from '../src';
import { backendConnection, type Backend } from './fixtures/backends.fixture';
import { notesFixture, uniqueSchema, type NotesFixture } from './fixtures/notes.fixture';
import { SqlCapture } from './fixtures/sql-capture.fixture';

// PGlite opens in 1-3 s (a fresh data directory runs initdb); the workspace default is 5 s.
jest.setTimeout(30_000);

describe.each<Backend>(['postgres', 'pglite'])('service DataSource on %s', (backend) => {
  const sql = new SqlCapture();
  let fixture: NotesFixture;
  let ds: DataSource;
  let connection: { url: string } | { dataDir: string };
  let cleanup: () => Promise<void> | void = () => undefined;

  beforeAll(async () => {
    fixture = notesFixture(uniqueSchema());
    ({ connection, cleanup } = await backendConnection(backend, fixture.schema, 'sds'));
    ds = await createServiceDataSource({
      service: 'notes',
      schema: fixture.schema,
      entities: fixture.entities,
      migrations: fixture.migrations,
      logger: sql,
      ...connection,
    });
  });

  afterAll(async () => {
    await closeServiceDataSource(ds);
    await cleanup();
  });

  const notes = () => ds.getRepository(fixture.NoteEntity);

  it('creates the schema and applies the migrations once', async () => {
    const [{ exists }] = await ds.query('SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1) AS exists', [
      fixture.schema,
    ]);
    expect(exists).toBe(true);

    expect(await runServiceMigrations(ds)).toEqual(fixture.migrationNames);
    expect(await runServiceMigrations(ds)).toEqual([]);
  });

  it('keeps the migrations table inside the service schema', async () => {
    const rows: Array<{ table_name: string }> = await ds.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
      fixture.schema,
    ]);
    expect(rows.map((r) => r.table_name).sort()).toEqual([`${fixture.schema}_migrations`, 'notes'].sort());
  });

  it('sends schema-qualified SQL and never relies on search_path', async () => {
    const [{ current }] = await ds.query('SELECT current_schema() AS current');
    expect(current).not.toBe(fixture.schema);

    sql.clear();
    const saved = await notes().save({ slug: 'qualified', body: 'hello' });
    const found = await notes().findOneByOrFail({ slug: 'qualified' });

    expect(found).toMatchObject({ id: saved.id, body: 'hello' });
    expect(found.createdAt).toBeInstanceOf(Date);
    const touching = sql.statements.filter((s) => s.includes('notes'));
    expect(touching.length).toBeGreaterThanOrEqual(2);
    for (const statement of touching) expect(statement).toContain(`"${fixture.schema}"."notes"`);
  });

  it('turns a unique violation into a DomainError with the given code', async () => {
    await notes().insert({ slug: 'taken', body: 'first' });

    const attempt = translateUniqueViolation(() => notes().insert({ slug: 'taken', body: 'second' }), {
      code: 'SLUG_CONFLICT',
      message: 'slug already in use',
    });

    await expect(attempt).rejects.toBeInstanceOf(DomainError);
    await expect(attempt).rejects.toMatchObject({
      code: 'SLUG_CONFLICT',
      message: 'slug already in use',
      details: { constraint: 'notes_slug_key' },
    });
  });

  it('leaves violations of other constraints untouched when constraints are named', async () => {
    const attempt = translateUniqueViolation(() => notes().insert({ slug: 'taken', body: 'third' }), {
      constraints: ['some_other_key'],
    });
    await expect(attempt).rejects.toBeInstanceOf(QueryFailedError);
  });

  it('rolls back a transaction that throws and commits one that resolves', async () => {
    const failed = withTransaction(ds, async (manager) => {
      await manager.getRepository(fixture.NoteEntity).insert({ slug: 'rolled-back', body: 'x' });
      throw new Error('boom');
    });
    await expect(failed).rejects.toThrow('boom');
    expect(await notes().countBy({ slug: 'rolled-back' })).toBe(0);

    const id = await withTransaction(ds, async (manager) => {
      const row = await manager.getRepository(fixture.NoteEntity).save({ slug: 'committed', body: 'y' });
      return row.id;
    });
    expect(await notes().findOneBy({ id })).toMatchObject({ slug: 'committed' });
  });

  it('reverts the last migration and reapplies it', async () => {
    expect(await revertLastMigration(ds)).toEqual(['AddNotesSlugUnique1700000000001']);
    await notes().insert({ slug: 'taken', body: 'duplicate allowed without the constraint' });
    await notes().delete({ body: 'duplicate allowed without the constraint' });

    expect(await runServiceMigrations(ds)).toEqual(['AddNotesSlugUnique1700000000001']);
  });

  it('reports migrations through the migrate command', async () => {
    const lines: string[] = [];
    const registry = { notes: { schema: fixture.schema, entities: fixture.entities, migrations: fixture.migrations } };
    const env = 'url' in connection ? { NOTES_DATABASE_URL: connection.url } : {};
    const dataDirArgs = 'dataDir' in connection ? ['--data-dir', connection.dataDir] : [];

    expect(await migrateCommand(['notes', '--status', ...dataDirArgs], registry, { env, log: (l) => lines.push(l) })).toBe(0);
    expect(await migrateCommand(['notes', ...dataDirArgs], registry, { env, log: (l) => lines.push(l) })).toBe(0);

    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { service: 'notes', schema: fixture.schema, action: 'status', executed: fixture.migrationNames, pending: [] },
      { service: 'notes', schema: fixture.schema, action: 'up', applied: [] },
    ]);
  });

  it('inserts into several tables in one atomic statement, with defaults where a value is unset', async () => {
    const { NoteEntity } = fixture;
    const ok = insertStatement(ds, [
      { target: NoteEntity, rows: [{ id: '00000000-0000-4000-8000-000000000001', slug: 'one-a', body: 'a' }] },
      {
        target: NoteEntity,
        rows: [{ id: '00000000-0000-4000-8000-000000000002', slug: 'one-b', body: 'b', createdAt: new Date('2020-01-02T03:04:05Z') }],
      },
    ] as InsertPart[]);
    expect(ok.sql).toMatch(/^WITH i0 AS \(INSERT INTO/);
    await ds.query(ok.sql, ok.params);
    const rows = await notes().find({ where: [{ slug: 'one-a' }, { slug: 'one-b' }], order: { slug: 'ASC' } });
    expect(rows.map((r) => r.slug)).toEqual(['one-a', 'one-b']);
    expect(rows[0]?.createdAt).toBeInstanceOf(Date); // column default
    expect(rows[1]?.createdAt.toISOString()).toBe('2020-01-02T03:04:05.000Z');

    // The second part violates the unique slug: the first part is not kept either.
    const clash = insertStatement(ds, [
      { target: NoteEntity, rows: [{ slug: 'one-c', body: 'c' }] },
      { target: NoteEntity, rows: [{ slug: 'one-a', body: 'again' }] },
    ] as InsertPart[]);
    await expect(ds.query(clash.sql, clash.params)).rejects.toThrow(QueryFailedError);
    expect(await notes().countBy({ slug: 'one-c' })).toBe(0);
    expect(() => insertStatement(ds, [{ target: NoteEntity, rows: [] }])).toThrow('no rows');
  });

  it('answers the health check', async () => {
    expect(await dbHealthCheck(ds)).toBe(true);
  });
});
