import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS } from '@kb/accounts';
import { CONTENT_ENTITIES, CONTENT_MIGRATIONS } from '@kb/content';
import type { MigrationRegistry } from '@kb/platform/database';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '@kb/reporting';

/**
 * The services that own a schema, each with its entities and migrations: what the standalone opens
 * at start, what `npm run migrate` applies, and what the e2e suites' database template is made of.
 */
export const SERVICE_SCHEMAS = {
  accounts: { schema: 'accounts', entities: ACCOUNTS_ENTITIES, migrations: ACCOUNTS_MIGRATIONS },
  content: { schema: 'content', entities: CONTENT_ENTITIES, migrations: CONTENT_MIGRATIONS },
  reporting: { schema: 'reporting', entities: REPORTING_ENTITIES, migrations: REPORTING_MIGRATIONS },
} satisfies MigrationRegistry;
