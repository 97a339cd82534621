import type { EntitySchema } from 'typeorm';
import { databaseUrlFromEnv, DEFAULT_DATA_DIR, type Env } from '../config/database-url.config';
import { closeServiceDataSource, createServiceDataSource, type ClassType } from '../data-source/service-data-source';
import { executedMigrationNames, pendingMigrationNames, revertLastMigration, runServiceMigrations } from './migration-runner';

export interface ServiceMigrations {
  schema: string;
  entities: ReadonlyArray<ClassType | EntitySchema>;
  migrations: ReadonlyArray<ClassType>;
}

/** Service name → what its DataSource needs; the composition root builds it from the apps. */
export type MigrationRegistry = Readonly<Record<string, ServiceMigrations>>;

export interface MigrateCommandIo {
  env?: Env;
  /** One JSON line per service and the usage text; default console.log / console.error. */
  log?: (line: string) => void;
  error?: (line: string) => void;
}

export type MigrateAction = 'up' | 'revert' | 'status';

export interface MigrateArgs {
  action: MigrateAction;
  services: string[];
  dataDir?: string;
}

export const MIGRATE_USAGE = [
  'usage: migrate [service ...] [--revert | --status] [--data-dir <dir>]',
  '  no service: every service; --revert: undo the last migration of exactly one service',
  '  URL per service from <SERVICE>_DATABASE_URL or DATABASE_URL, else embedded PGlite',
  '  (--data-dir, else PGLITE_DATA_DIR, else ./data/pg)',
].join('\n');

/** Parses argv (without node and script); throws an Error with a user-facing message. */
export function parseMigrateArgs(argv: readonly string[], registry: MigrationRegistry): MigrateArgs {
  let action: MigrateAction = 'up';
  let dataDir: string | undefined;
  const services: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--revert' || arg === '--status') {
      if (action !== 'up') throw new Error('--revert and --status cannot be combined');
      action = arg === '--revert' ? 'revert' : 'status';
    } else if (arg === '--data-dir') {
      dataDir = argv[++i];
      if (!dataDir) throw new Error('--data-dir needs a directory');
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg}`);
    } else if (!registry[arg]) {
      throw new Error(`unknown service "${arg}"; known: ${Object.keys(registry).join(', ')}`);
    } else if (!services.includes(arg)) {
      services.push(arg);
    }
  }
  if (action === 'revert' && services.length !== 1) throw new Error('--revert needs exactly one service');
  return { action, services: services.length ? services : Object.keys(registry), ...(dataDir ? { dataDir } : {}) };
}

/** `npm run migrate -- content`: returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function migrateCommand(argv: readonly string[], registry: MigrationRegistry, io: MigrateCommandIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const log = io.log ?? ((line: string) => console.log(line));
  const error = io.error ?? ((line: string) => console.error(line));

  let args: MigrateArgs;
  try {
    args = parseMigrateArgs(argv, registry);
  } catch (err) {
    error(`${(err as Error).message}\n${MIGRATE_USAGE}`);
    return 2;
  }

  const dataDir = args.dataDir ?? (env.PGLITE_DATA_DIR?.trim() || DEFAULT_DATA_DIR);
  for (const service of args.services) {
    const entry = registry[service] as ServiceMigrations;
    try {
      const url = databaseUrlFromEnv(env, service);
      const dataSource = await createServiceDataSource({
        service,
        schema: entry.schema,
        entities: entry.entities,
        migrations: entry.migrations,
        ...(url ? { url } : { dataDir }),
        poolSize: 2,
      });
      try {
        log(JSON.stringify({ service, schema: entry.schema, action: args.action, ...(await perform(args.action, dataSource)) }));
      } finally {
        await closeServiceDataSource(dataSource);
      }
    } catch (err) {
      error(JSON.stringify({ service, action: args.action, error: (err as Error).message }));
      return 1;
    }
  }
  return 0;
}

async function perform(
  action: MigrateAction,
  dataSource: Awaited<ReturnType<typeof createServiceDataSource>>,
): Promise<Record<string, string[]>> {
  switch (action) {
    case 'up':
      return { applied: await runServiceMigrations(dataSource) };
    case 'revert':
      return { reverted: await revertLastMigration(dataSource) };
    case 'status':
      return { executed: await executedMigrationNames(dataSource), pending: await pendingMigrationNames(dataSource) };
  }
}
