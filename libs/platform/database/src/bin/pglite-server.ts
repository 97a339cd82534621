import { pgliteServerEnv, type Env } from '../config/database-url.config';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../embedded/embedded-postgres';

export interface PgliteServerIo {
  env?: Env;
  /** Receives the one JSON line announcing the URL (and one on shutdown). Default stdout. */
  log?: (line: string) => void;
  /** Resolves when the server should stop. Default: the first SIGTERM or SIGINT. */
  until?: Promise<unknown>;
}

/**
 * Serves a PGlite data directory over the PostgreSQL wire protocol until SIGTERM/SIGINT, for the
 * distributed topology: the machine's PostgreSQL has no pgvector, so the content schema lives
 * here and the content service connects with CONTENT_DATABASE_URL=<the logged url>.
 * Env: PGLITE_DATA_DIR (./data/pg), PGLITE_HOST (127.0.0.1), PGLITE_PORT (0 = any free port),
 * PGLITE_MAX_CONNECTIONS (100).
 */
export async function main(io: PgliteServerIo = {}): Promise<void> {
  const log = io.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const config = pgliteServerEnv(io.env ?? process.env);
  const until = io.until ?? firstSignal();

  const pg: EmbeddedPostgres = await startEmbeddedPostgres(config);
  log(JSON.stringify({ msg: 'pglite listening', url: pg.url, dataDir: pg.dataDir, startupMs: pg.startupMs, pid: process.pid }));
  const reason = await until;
  await pg.stop();
  log(JSON.stringify({ msg: 'pglite stopped', reason: typeof reason === 'string' ? reason : 'requested' }));
}

function firstSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${JSON.stringify({ msg: 'pglite failed', error: (err as Error).message })}\n`);
    process.exit(1);
  });
}
