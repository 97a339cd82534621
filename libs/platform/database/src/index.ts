export {
  DEFAULT_DATA_DIR,
  databaseUrlFromEnv,
  pgliteServerEnv,
  serviceDatabaseUrlVariable,
  validateDatabaseUrl,
  type Env,
  type PgliteServerEnv,
} from './config/database-url.config';
export {
  DEFAULT_MAX_CONNECTIONS,
  runningEmbeddedDataDirs,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from './embedded/embedded-postgres';
export { ExtendedProtocolTracker, guardSharedSession } from './embedded/pglite-session-guard';
export {
  closeServiceDataSource,
  createServiceDataSource,
  migrationsTableName,
  type ClassType,
  type ServiceDataSourceOptions,
} from './data-source/service-data-source';
export { executedMigrationNames, pendingMigrationNames, revertLastMigration, runServiceMigrations } from './migrations/migration-runner';
export {
  MIGRATE_USAGE,
  migrateCommand,
  parseMigrateArgs,
  type MigrateAction,
  type MigrateArgs,
  type MigrateCommandIo,
  type MigrationRegistry,
  type ServiceMigrations,
} from './migrations/migrate.command';
export { withTransaction, type TransactionOptions } from './transaction/with-transaction';
export {
  UNIQUE_VIOLATION,
  isUniqueViolation,
  translateUniqueViolation,
  uniqueViolationToDomainError,
  type UniqueViolationOptions,
} from './transaction/unique-violation.error';
export { DEFAULT_DB_HEALTH_TIMEOUT_MS, databaseHealthCheck, dbHealthCheck } from './health/db-health';
export {
  DatabaseModule,
  InjectServiceDataSource,
  dataSourceToken,
  type DatabaseModuleAsyncOptions,
  type DatabaseModuleOptions,
} from './nest/database.module';
export { main as pgliteServerMain, type PgliteServerIo } from './bin/pglite-server';
export { asRow } from './typeorm/as-row';
export { insertStatement, type InsertPart } from './typeorm/insert-statement';
export { prepared, preparedQuery, type PreparedStatement } from './typeorm/prepared-query';
export { entitySelect, type EntitySelect } from './typeorm/entity-select';
