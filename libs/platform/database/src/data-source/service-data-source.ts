import { DataSource, type EntitySchema, type Logger } from 'typeorm';
import { DEFAULT_DATA_DIR } from '../config/database-url.config';
import { embeddedConnection, startEmbeddedPostgres, type EmbeddedPostgres } from '../embedded/embedded-postgres';
import { runServiceMigrations } from '../migrations/migration-runner';

/** Any class: entity and migration classes. Narrower than `Function`, which TypeORM accepts. */
export type ClassType = abstract new (...args: never[]) => unknown;

export interface ServiceDataSourceOptions {
  /** Service name, used for the connection's application_name and in error messages. */
  service: string;
  /** The one schema this service owns; also holds its migrations table. */
  schema: string;
  /** A PostgreSQL URL; absent → the embedded PGlite for `dataDir`. */
  url?: string;
  /** Embedded data directory, used when `url` is absent. Default ./data/pg. */
  dataDir?: string;
  entities: ReadonlyArray<ClassType | EntitySchema>;
  migrations: ReadonlyArray<ClassType>;
  /** Pool size. Default 10 on a server, 4 on PGlite (it runs one statement at a time anyway). */
  poolSize?: number;
  logging?: boolean;
  /** A TypeORM logger, e.g. to route SQL into pino or to capture it in tests. */
  logger?: Logger;
  runMigrations?: boolean;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Embedded instances joined by DataSources, released again by closeServiceDataSource. */
const embeddedByDataSource = new WeakMap<DataSource, EmbeddedPostgres>();

export function migrationsTableName(schema: string): string {
  return `${schema}_migrations`;
}

/**
 * An initialised TypeORM DataSource for one service. Never synchronises: the schema changes only
 * through the service's migrations. Entities must name their schema (`@Entity({ schema, name })`)
 * so every statement is schema-qualified: on PGlite all connections share one session, and a
 * `SET search_path` would leak into every other service.
 */
export async function createServiceDataSource(options: ServiceDataSourceOptions): Promise<DataSource> {
  assertSchemaName(options.schema);
  // The embedded database serves this process only: a Unix socket (cheaper per statement than TCP).
  const embedded = options.url ? undefined : await startEmbeddedPostgres({ dataDir: options.dataDir ?? DEFAULT_DATA_DIR, socket: 'unix' });

  const dataSource = new DataSource({
    type: 'postgres',
    ...(embedded ? embeddedConnection(embedded.url) : { url: options.url }),
    schema: options.schema,
    entities: [...options.entities],
    migrations: [...options.migrations],
    migrationsTableName: migrationsTableName(options.schema),
    migrationsTransactionMode: 'all',
    migrationsRun: false,
    synchronize: false,
    // Extensions are created by migrations, explicitly; gen_random_uuid() is built in since PG 13.
    installExtensions: false,
    uuidExtension: 'pgcrypto',
    applicationName: `kb-${options.service}`,
    poolSize: options.poolSize ?? (embedded ? 4 : 10),
    logging: options.logging ?? false,
    ...(options.logger ? { logger: options.logger } : {}),
  });

  try {
    await dataSource.initialize();
    if (embedded) embeddedByDataSource.set(dataSource, embedded);
    await ensureSchema(dataSource, options.schema);
    if (options.runMigrations) await runServiceMigrations(dataSource);
    return dataSource;
  } catch (err) {
    if (dataSource.isInitialized) await dataSource.destroy();
    embeddedByDataSource.delete(dataSource);
    await embedded?.stop();
    throw err;
  }
}

/** Destroys the DataSource (closing its pool) and releases the embedded instance it joined. */
export async function closeServiceDataSource(dataSource: DataSource): Promise<void> {
  const embedded = embeddedByDataSource.get(dataSource);
  embeddedByDataSource.delete(dataSource);
  try {
    if (dataSource.isInitialized) await dataSource.destroy();
  } finally {
    await embedded?.stop();
  }
}

async function ensureSchema(dataSource: DataSource, schema: string): Promise<void> {
  try {
    await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (err) {
    // Two replicas starting together can both pass IF NOT EXISTS; the loser sees 23505.
    if ((err as { code?: string }).code !== '23505') throw err;
  }
}

function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid schema name "${schema}": lower-case letters, digits and _ only`);
  }
}
