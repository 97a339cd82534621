import pino, { type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';

export type { Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where JSON lines go; stdout by default. Tests pass a stream to read them. */
  destination?: pino.DestinationStream;
}

/**
 * Field names whose values must never reach a log line. pino replaces them wherever they appear
 * in logged objects, so a careless `logger.info({ headers })` cannot leak a credential.
 */
export const REDACTED_PATHS = [
  'password',
  'token',
  'secret',
  '*.password',
  '*.token',
  '*.secret',
  'headers.authorization',
  'headers["x-svc-serviceaccount"]',
  'headers["x-svc-uakey"]',
  'headers["x-nuclia-serviceaccount"]',
  'headers["x-stf-serviceaccount"]',
  'headers["x-nuclia-nuakey"]',
  'headers["x-stf-nuakey"]',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers["x-svc-serviceaccount"]',
  'req.headers["x-svc-uakey"]',
  'req.headers["x-nuclia-serviceaccount"]',
  'req.headers["x-stf-serviceaccount"]',
  'req.headers["x-nuclia-nuakey"]',
  'req.headers["x-stf-nuakey"]',
  'req.headers.cookie',
];

let stdoutDestination: pino.DestinationStream | undefined;

/**
 * A file descriptor written asynchronously in chunks of at least 4 KiB, flushed every second and
 * when the process exits. pino's default writes each line synchronously: at info level every HTTP
 * request's access line was a write(2) on the thread that serves the requests (~10 % of the
 * standalone's main thread reading resources at 8 connections; docs/benchmarks.md, issue 17).
 * What a SIGKILL can lose: the lines of the last second. The periodic flush is sonic-boom's own
 * timer, stopped in the same step that marks the stream destroyed (a timer of ours could fire between
 * `end()` and `'close'` and flush a destroyed stream).
 */
export function bufferedDestination(fd: number, flushEveryMs = 1000): ReturnType<typeof pino.destination> {
  const dest = pino.destination({ dest: fd, sync: false, minLength: 4096, periodicFlush: flushEveryMs });
  const flushAtExit = (): void => {
    try {
      dest.flushSync();
    } catch {
      // a stream being closed, or an asynchronous write still in flight at exit: it completes or is
      // lost with the process
    }
  };
  process.once('exit', flushAtExit);
  dest.once('close', () => process.removeListener('exit', flushAtExit));
  return dest;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? (stdoutDestination ??= bufferedDestination(1)),
  );
}

/** Lets NestJS write its own messages through pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
