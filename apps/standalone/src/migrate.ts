import 'reflect-metadata';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS } from '@kb/accounts';
import { CONTENT_ENTITIES, CONTENT_MIGRATIONS } from '@kb/content';
import { migrateCommand, type MigrationRegistry } from '@kb/platform/database';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '@kb/reporting';

/**
 * One-shot migrations (a Kubernetes Job in production): `npm run migrate -- [service…] [--status|--revert]`.
 * Each service migrates its own schema on its own URL (`<SERVICE>_DATABASE_URL` or `DATABASE_URL`).
 */
const registry: MigrationRegistry = {
  accounts: { schema: 'accounts', entities: ACCOUNTS_ENTITIES, migrations: ACCOUNTS_MIGRATIONS },
  content: { schema: 'content', entities: CONTENT_ENTITIES, migrations: CONTENT_MIGRATIONS },
  reporting: { schema: 'reporting', entities: REPORTING_ENTITIES, migrations: REPORTING_MIGRATIONS },
};

migrateCommand(process.argv.slice(2), registry)
  .then((code) => process.exit(code))
  .catch((err: unknown) => {
    console.error(JSON.stringify({ msg: 'migrate failed', error: (err as Error).message }));
    process.exit(1);
  });
