import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { MessageBus } from '@kb/platform/messaging';
import { HttpErrorFilter } from '@kb/platform/errors';
import { PinoNestLogger, type Logger } from '@kb/platform/observability';

/** Creates a Nest app with pino logging and no implicit body parser (the edge sets its own). */
export async function createHttpApp(
  module: DynamicModule,
  logger: Logger,
  configure?: (app: INestApplication) => void,
): Promise<INestApplication> {
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
 * Stops cleanly on SIGTERM/SIGINT: runs `close`, flushes the logs and exits 0; past `graceMs`
 * (SHUTDOWN_GRACE_MS) it gives up and exits 1, and so does a second signal.
 */
export function closeOnSignals(logger: Logger, close: () => Promise<void>, options: { graceMs?: number } = {}): void {
  const graceMs = options.graceMs ?? 25_000;
  let closing = false;
  const exit = (code: number) => void flushLogs(logger).finally(() => process.exit(code));
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal: exiting without finishing the shutdown');
      return exit(1);
    }
    closing = true;
    const started = Date.now();
    logger.info({ signal, grace_ms: graceMs }, 'shutting down');
    // Not unref'd: it is what ends a shutdown that hangs.
    const limit = setTimeout(() => {
      logger.error({ grace_ms: graceMs }, 'shutdown did not finish within SHUTDOWN_GRACE_MS; exiting');
      exit(1);
    }, graceMs);
    close()
      .then(() => {
        clearTimeout(limit);
        logger.info({ duration_ms: Date.now() - started }, 'shut down');
        exit(0);
      })
      .catch((err: unknown) => {
        clearTimeout(limit);
        logger.error({ err: { message: (err as Error)?.message } }, 'shutdown failed');
        exit(1);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * The graceful shutdown of an app process, in the order that loses nothing: the HTTP server stops
 * accepting and lets the requests in flight finish (at most 30 % of the grace; then their
 * connections are cut); the bus stops pulling jobs and events and waits for the running handlers
 * (its drain, half the grace; a job still running then is handed back, not acknowledged); the app
 * closes (outbox relays flushed in its destroy hooks, then the bus is closed); then `release`
 * (databases, blob store); finally the logs are flushed.
 */
export function shutdownOnSignals(
  logger: Logger,
  app: INestApplication,
  bus: MessageBus,
  graceMs: number,
  release: () => Promise<void>,
): void {
  closeOnSignals(
    logger,
    async () => {
      await stopHttp(app, Math.floor(graceMs * 0.3), logger);
      await bus.stopConsuming();
      await app.close();
      await release();
    },
    { graceMs },
  );
}

/** Stops accepting connections and waits for the requests in flight (at most `limitMs`, then cuts them). */
export async function stopHttp(app: INestApplication, limitMs: number, logger: Logger): Promise<void> {
  const server = app.getHttpServer() as Server | undefined;
  if (!server?.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections between requests would hold the server open: close each as it goes idle.
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), limitMs))),
  ]);
  clearInterval(idle);
  clearTimeout(timer);
  if (!drained) {
    logger.warn({ limit_ms: limitMs }, 'requests still in flight at the HTTP drain limit; closing their connections');
    server.closeAllConnections();
    await closed;
  }
}

/** Writes out what the log destination still buffers (at most 1 s). */
function flushLogs(logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1000);
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
