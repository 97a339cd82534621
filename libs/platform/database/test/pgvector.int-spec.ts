import { Column, Entity, PrimaryColumn, type DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { closeServiceDataSource, createServiceDataSource, withTransaction } from '../src';
import { tempDataDir } from './fixtures/backends.fixture';
import { uniqueSchema } from './fixtures/notes.fixture';

// PGlite opens in 1-3 s (a fresh data directory runs initdb); the workspace default is 5 s.
jest.setTimeout(30_000);

/** pgvector exists only on PGlite here (the machine's PostgreSQL 15 has no `vector`). */
describe('pgvector on the embedded PostgreSQL', () => {
  const dir = tempDataDir('vector');
  const schema = uniqueSchema('vec');

  @Entity({ schema, name: 'paragraphs' })
  class ParagraphEntity {
    @PrimaryColumn({ type: 'text' })
    id!: string;

    @Column({ type: 'vector', length: 3 })
    embedding!: number[];
  }

  class CreateParagraphs1700000000000 implements MigrationInterface {
    name = 'CreateParagraphs1700000000000';
    async up(runner: QueryRunner): Promise<void> {
      await runner.query('CREATE EXTENSION IF NOT EXISTS vector');
      await runner.query(`CREATE TABLE "${schema}"."paragraphs" (id text PRIMARY KEY, embedding vector(3) NOT NULL)`);
      await runner.query(`CREATE INDEX paragraphs_embedding_hnsw ON "${schema}"."paragraphs" USING hnsw (embedding vector_cosine_ops)`);
    }
    async down(runner: QueryRunner): Promise<void> {
      await runner.query(`DROP TABLE "${schema}"."paragraphs"`);
    }
  }

  let ds: DataSource;

  beforeAll(async () => {
    ds = await createServiceDataSource({
      service: 'vectors',
      schema,
      entities: [ParagraphEntity],
      migrations: [CreateParagraphs1700000000000],
      dataDir: dir.dataDir,
      runMigrations: true,
    });
    await ds.getRepository(ParagraphEntity).insert([
      { id: 'x-axis', embedding: [1, 0, 0] },
      { id: 'near-x', embedding: [0.9, 0.1, 0] },
      { id: 'y-axis', embedding: [0, 1, 0] },
      { id: 'z-axis', embedding: [0, 0, 1] },
      { id: 'diagonal', embedding: [1, 1, 1] },
    ]);
  });

  afterAll(async () => {
    await closeServiceDataSource(ds);
    dir.remove();
  });

  it('has the vector extension installed', async () => {
    const rows: Array<{ extversion: string }> = await ds.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    expect(rows).toHaveLength(1);
  });

  it('returns the nearest neighbours by cosine distance', async () => {
    const rows: Array<{ id: string }> = await ds.query(`SELECT id FROM "${schema}"."paragraphs" ORDER BY embedding <=> $1 LIMIT 2`, [
      '[1,0.05,0]',
    ]);
    expect(rows.map((r) => r.id)).toEqual(['x-axis', 'near-x']);
  });

  it('answers through the HNSW index', async () => {
    const plan = await withTransaction(ds, async (manager) => {
      // SET LOCAL: on PGlite every connection shares the session, so a plain SET would leak.
      await manager.query('SET LOCAL enable_seqscan = off');
      await manager.query('SET LOCAL hnsw.ef_search = 100');
      const rows: Array<{ 'QUERY PLAN': string }> = await manager.query(
        `EXPLAIN SELECT id FROM "${schema}"."paragraphs" ORDER BY embedding <=> '[0,1,0.1]' LIMIT 1`,
      );
      const nearest: Array<{ id: string }> = await manager.query(
        `SELECT id FROM "${schema}"."paragraphs" ORDER BY embedding <=> '[0,1,0.1]' LIMIT 1`,
      );
      return { plan: rows.map((r) => r['QUERY PLAN']).join('\n'), nearest };
    });
    expect(plan.plan).toContain('paragraphs_embedding_hnsw');
    expect(plan.nearest).toEqual([{ id: 'y-axis' }]);
  });

  it('hydrates vector columns as number arrays', async () => {
    const row = await ds.getRepository(ParagraphEntity).findOneByOrFail({ id: 'near-x' });
    expect(row.embedding).toEqual([0.9, 0.1, 0]);
  });
});
