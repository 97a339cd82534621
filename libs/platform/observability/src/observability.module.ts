import { Controller, Get, Header, Inject, Module, Res, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { runHealthChecks, type HealthCheck } from './health';
import { ensureDefaultMetrics, httpRequestDuration, metricsRegistry } from './metrics';

export const OBSERVABILITY_OPTIONS = Symbol('OBSERVABILITY_OPTIONS');
export const LOGGER = Symbol('LOGGER');

export interface ObservabilityOptions {
  service: string;
  logger: Logger;
  checks: HealthCheck[];
  /** Log one line per request (off for internal-only apps with no traffic worth logging). */
  accessLog?: boolean;
}

@ApiExcludeController()
@Controller()
class HealthController {
  constructor(@Inject(OBSERVABILITY_OPTIONS) private readonly options: ObservabilityOptions) {}

  @Get('health/live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('health/ready')
  async ready(@Res() res: Response): Promise<void> {
    const report = await runHealthChecks(this.options.checks);
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  }

  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  async metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}

/** Principal attached by the gateway's guard; logged by id only. */
interface ObservedRequest extends Request {
  id?: string;
  principal?: { id?: string };
}

export function requestObserver(options: ObservabilityOptions) {
  return (req: ObservedRequest, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      httpRequestDuration.labels(options.service, req.method, route, String(res.statusCode)).observe(seconds);
      if (options.accessLog !== false) {
        options.logger.info(
          {
            request_id: id,
            principal_id: req.principal?.id,
            method: req.method,
            route,
            status: res.statusCode,
            duration_ms: Math.round(seconds * 1e4) / 10,
          },
          'request',
        );
      }
    });
    next();
  };
}

@Module({})
export class ObservabilityModule implements NestModule {
  constructor(@Inject(OBSERVABILITY_OPTIONS) private readonly options: ObservabilityOptions) {}

  static forRoot(options: ObservabilityOptions): DynamicModule {
    ensureDefaultMetrics();
    return {
      module: ObservabilityModule,
      global: true,
      controllers: [HealthController],
      providers: [
        { provide: OBSERVABILITY_OPTIONS, useValue: options },
        { provide: LOGGER, useValue: options.logger },
      ],
      exports: [LOGGER],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(requestObserver(this.options)).forRoutes('*');
  }
}
