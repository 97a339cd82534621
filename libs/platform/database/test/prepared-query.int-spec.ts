import { Column, Entity, In, PrimaryColumn, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { closeServiceDataSource, createServiceDataSource, entitySelect, prepared, preparedQuery } from '../src';
import { backendConnection, type Backend } from './fixtures/backends.fixture';
import { uniqueSchema } from './fixtures/notes.fixture';

// PGlite opens in 1-3 s (a fresh data directory runs initdb); the workspace default is 5 s.
jest.setTimeout(30_000);

/** An entity with every kind of column entitySelect must map as TypeORM's `find` does. */
function itemsFixture(schema: string) {
  @Entity({ schema, name: 'items' })
  class ItemEntity {
    @PrimaryColumn('uuid') id!: string;
    @Column({ type: 'text' }) title!: string;
    @Column({ type: 'jsonb', default: () => "'{}'" }) metadata!: Record<string, unknown>;
    @Column({ type: 'jsonb', name: 'access_groups', default: () => "'[]'" }) accessGroups!: string[];
    @Column({ type: 'boolean', default: false }) hidden!: boolean;
    @Column({ type: 'text', array: true, name: 'search_tags', select: false, default: () => "'{}'" }) searchTags?: string[];
    @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
    @Column({ type: 'integer', nullable: true }) pages!: number | null;
    @Column({
      type: 'bigint',
      name: 'last_seqid',
      nullable: true,
      transformer: { to: (v: number) => v, from: (v: string | null) => (v === null ? 0 : Number(v)) },
    })
    lastSeqid!: number;
  }
  class CreateItems1700000000000 implements MigrationInterface {
    name = 'CreateItems1700000000000';
    async up(runner: QueryRunner): Promise<void> {
      await runner.query(`
        CREATE TABLE "${schema}"."items" (
          id uuid PRIMARY KEY, title text NOT NULL, metadata jsonb NOT NULL DEFAULT '{}', access_groups jsonb NOT NULL DEFAULT '[]',
          hidden boolean NOT NULL DEFAULT false, search_tags text[] NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL,
          pages integer, last_seqid bigint)`);
    }
    async down(runner: QueryRunner): Promise<void> {
      await runner.query(`DROP TABLE "${schema}"."items"`);
    }
  }
  return { schema, ItemEntity, entities: [ItemEntity], migrations: [CreateItems1700000000000] };
}

const IDS = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];

describe.each<Backend>(['postgres', 'pglite'])('prepared reads on %s', (backend) => {
  let fixture: ReturnType<typeof itemsFixture>;
  let ds: DataSource;
  let other: DataSource;
  let cleanup: () => Promise<void> | void = () => undefined;

  beforeAll(async () => {
    fixture = itemsFixture(uniqueSchema());
    const backendOf = await backendConnection(backend, fixture.schema, 'prepared');
    const connection = backendOf.connection;
    cleanup = backendOf.cleanup;
    const open = (runMigrations: boolean) =>
      createServiceDataSource({
        service: 'items',
        schema: fixture.schema,
        entities: fixture.entities,
        migrations: fixture.migrations,
        runMigrations,
        poolSize: 3,
        ...connection,
      });
    ds = await open(true);
    // A second pool: on PGlite its connections share the one session with the first pool's.
    other = await open(false);
    await ds.getRepository(fixture.ItemEntity).insert([
      {
        id: IDS[0],
        title: 'one',
        metadata: { a: [1, { b: 'c' }] },
        accessGroups: ['g1'],
        hidden: true,
        searchTags: ['t'],
        createdAt: new Date('2026-01-02T03:04:05.678Z'),
        pages: 3,
        lastSeqid: 42,
      },
      { id: IDS[1], title: 'two', createdAt: new Date('2026-02-03T00:00:00Z'), pages: null },
    ]);
  });

  afterAll(async () => {
    await closeServiceDataSource(other);
    await closeServiceDataSource(ds);
    await cleanup();
  });

  const select = () => entitySelect(ds, fixture.ItemEntity, 'WHERE id = ANY($1::uuid[]) ORDER BY id');

  it('maps rows exactly as find does: instances of the entity, transformers applied, unselected columns left out', async () => {
    const s = select();
    const mine = (await preparedQuery<Record<string, unknown>>(ds, s.statement, [IDS])).map((r) => s.hydrate(r));
    const theirs = await ds.getRepository(fixture.ItemEntity).find({ where: { id: In(IDS) }, order: { id: 'ASC' } });
    expect(mine).toHaveLength(2);
    expect(mine).toStrictEqual(theirs);
    expect(mine[0]).toBeInstanceOf(fixture.ItemEntity);
    expect(mine[0]?.lastSeqid).toBe(42);
    expect(mine[1]?.lastSeqid).toBe(0);
    expect(mine[0]).not.toHaveProperty('searchTags');
  });

  it('runs the same statement from every connection of both pools, concurrently, with the right parameters', async () => {
    const s = select();
    const runs = Array.from({ length: 24 }, (_, i) => {
      const id = IDS[i % 3] as string;
      return preparedQuery<{ id: string }>(i % 2 ? other : ds, s.statement, [[id]]).then((rows) => ({ id, got: rows.map((r) => r.id) }));
    });
    for (const { id, got } of await Promise.all(runs)) expect(got).toEqual(id === IDS[2] ? [] : [id]);
  });

  it('recovers when the session lost its prepared statements (DEALLOCATE ALL)', async () => {
    const statement = prepared(`SELECT count(*)::int AS n FROM "${fixture.schema}".items WHERE hidden = $1`);
    const run = (on: DataSource) => preparedQuery<{ n: number }>(on, statement, [true]);
    // All three connections of the pool at once: each one's driver then knows the statement as prepared.
    const everyConnection = () => Promise.all([run(ds), run(ds), run(ds)]);
    expect(await everyConnection()).toEqual([[{ n: 1 }], [{ n: 1 }], [{ n: 1 }]]);
    // The session forgets (on PGlite the one shared session; on a server the connection it ran on).
    await ds.query('DEALLOCATE ALL');
    expect(await everyConnection()).toEqual([[{ n: 1 }], [{ n: 1 }], [{ n: 1 }]]);
  });

  it('reports a statement error as the error, and leaves the connection usable', async () => {
    const bad = prepared(`SELECT 1 / $1::int AS x FROM "${fixture.schema}".items`);
    await expect(preparedQuery(ds, bad, [0])).rejects.toMatchObject({ code: '22012' });
    expect(await preparedQuery(ds, bad, [1])).toEqual([{ x: 1 }, { x: 1 }]);
  });

  it('refuses an entity with a column it would not map as TypeORM does', () => {
    const meta = ds.getMetadata(fixture.ItemEntity);
    const column = meta.columns.find((c) => c.propertyName === 'title');
    const type = column?.type;
    try {
      if (column) column.type = 'date';
      expect(() => select()).toThrow(/title has type date/);
    } finally {
      if (column && type !== undefined) column.type = type;
    }
  });
});
