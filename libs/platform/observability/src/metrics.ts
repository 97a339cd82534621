import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process. In the standalone topology every service shares it, so metric
 * names carry a `service` label instead of being registered once per module.
 */
export const metricsRegistry = new Registry();
let defaultsCollected = false;

export function ensureDefaultMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry, prefix: 'kb_' });
}

function getOrCreate<T>(name: string, create: () => T): T {
  return (metricsRegistry.getSingleMetric(name) as T | undefined) ?? create();
}

export const httpRequestDuration = getOrCreate(
  'kb_http_request_duration_seconds',
  () =>
    new Histogram({
      name: 'kb_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['service', 'method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metricsRegistry],
    }),
);

export const busHandlerDuration = getOrCreate(
  'kb_bus_handler_duration_seconds',
  () =>
    new Histogram({
      name: 'kb_bus_handler_duration_seconds',
      help: 'Bus handler latency by subject and outcome',
      labelNames: ['service', 'subject', 'outcome'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers: [metricsRegistry],
    }),
);

export const processingJobs = getOrCreate(
  'kb_processing_jobs_total',
  () =>
    new Counter({
      name: 'kb_processing_jobs_total',
      help: 'Processing jobs by outcome',
      labelNames: ['service', 'outcome'] as const,
      registers: [metricsRegistry],
    }),
);
