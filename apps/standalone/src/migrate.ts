import 'reflect-metadata';
import { migrateCommand } from '@kb/platform/database';
import { SERVICE_SCHEMAS } from './schemas';

/**
 * One-shot migrations (a Kubernetes Job in production): `npm run migrate -- [service…] [--status|--revert]`.
 * Each service migrates its own schema on its own URL (`<SERVICE>_DATABASE_URL` or `DATABASE_URL`).
 */
migrateCommand(process.argv.slice(2), SERVICE_SCHEMAS)
  .then((code) => process.exit(code))
  .catch((err: unknown) => {
    console.error(JSON.stringify({ msg: 'migrate failed', error: (err as Error).message }));
    process.exit(1);
  });
