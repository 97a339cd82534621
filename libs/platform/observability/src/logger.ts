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

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination,
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
