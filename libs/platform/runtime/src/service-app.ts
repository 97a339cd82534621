import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { closeServiceDataSource, createServiceDataSource, databaseUrlFromEnv, dbHealthCheck, type ClassType } from '@kb/platform/database';
import type { Env } from '@kb/platform/config';
import { MessagingModule, type MessageBus } from '@kb/platform/messaging';
import { ObservabilityModule, type HealthCheck, type Logger } from '@kb/platform/observability';
import { join } from 'node:path';
import type { RuntimeEnv } from './runtime-env';

@Module({})
class ServiceAppModule {}

/**
 * Root module of one process of the distributed topology: observability (health, metrics, logs),
 * the bus, and the service modules it runs.
 */
export function serviceAppModule(
  service: string,
  logger: Logger,
  bus: MessageBus,
  checks: HealthCheck[],
  imports: DynamicModule[],
): DynamicModule {
  return {
    module: ServiceAppModule,
    imports: [
      ObservabilityModule.forRoot({
        service,
        logger,
        checks: [...checks, { name: 'bus', check: () => bus.isHealthy() }],
        accessLog: false,
      }),
      MessagingModule.forRoot(bus),
      ...imports,
    ],
  };
}

/** The service's own DataSource: `<SERVICE>_DATABASE_URL`, `DATABASE_URL`, or embedded PGlite under DATA_DIR/pg. */
export async function serviceDataSource(
  env: Env,
  runtime: RuntimeEnv,
  service: string,
  entities: readonly ClassType[],
  migrations: readonly ClassType[],
): Promise<{ dataSource: DataSource; check: HealthCheck; close: () => Promise<void> }> {
  const dataSource = await createServiceDataSource({
    service,
    schema: service,
    url: databaseUrlFromEnv(env, service),
    dataDir: join(runtime.dataDir, 'pg'),
    entities,
    migrations,
    // Production runs migrations as a one-shot job; the embedded default and tests run them at start.
    runMigrations: env['MIGRATIONS_RUN'] !== 'false',
  });
  return {
    dataSource,
    check: { name: `db:${service}`, check: () => dbHealthCheck(dataSource) },
    close: () => closeServiceDataSource(dataSource),
  };
}
