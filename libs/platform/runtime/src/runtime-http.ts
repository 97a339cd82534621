import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import { HttpErrorFilter } from '@kb/platform/errors';
import { PinoNestLogger, type Logger } from '@kb/platform/observability';

/** Creates a Nest app with pino logging and no implicit body parser (the edge sets its own). */
export async function createHttpApp(module: DynamicModule, logger: Logger, configure?: (app: INestApplication) => void): Promise<INestApplication> {
  const app = await NestFactory.create(module, { bodyParser: false, logger: new PinoNestLogger(logger), abortOnError: false });
  if (configure) configure(app);
  else app.useGlobalFilters(new HttpErrorFilter(logger));
  return app;
}

/** Exits on the first fatal start-up error with one clear log line. */
export function runMain(logger: Logger, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    logger.fatal({ err: { message: (err as Error)?.message, stack: (err as Error)?.stack } }, 'start-up failed');
    setTimeout(() => process.exit(1), 50);
  });
}

/**
 * Stops cleanly on SIGTERM/SIGINT: the app first (stop taking work, drain the bus), then the
 * resources it used (databases, so embedded PostgreSQL is flushed). A second signal exits at once.
 */
export function closeOnSignals(logger: Logger, close: () => Promise<void>): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    logger.info({ signal }, 'shutting down');
    close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err: { message: (err as Error)?.message } }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
