import 'reflect-metadata';
import { join } from 'node:path';
import { GatewayModule, configureGatewayHttp, gatewayHttpEnv } from '@kb/gateway';
import { createLogger } from '@kb/platform/observability';
import {
  createHttpApp,
  createRuntimeBus,
  readRuntimeEnv,
  runMain,
  shutdownOnSignals,
  serverSecret,
  serviceAppModule,
} from '@kb/platform/runtime';
import { StorageModule, blobStoreConfigFromEnv, blobStoreHealthCheck, createBlobStore } from '@kb/platform/storage';

/** The HTTP edge as its own process: stateless, scale it behind a load balancer. */
const logger = createLogger({ service: 'gateway', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8080);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'nats', port });
  const accessCacheTtlSeconds = reader.int('ACCESS_CACHE_TTL_SECONDS', 5, { min: 0, max: 300 });
  const httpOptions = gatewayHttpEnv(reader);
  const corsOrigins = reader.list('CORS_ORIGINS');
  const blockingRefreshMs = reader.int('USAGE_BLOCKING_REFRESH_MS', 30_000, { min: 100, max: 3_600_000 });
  reader.done();
  const secret = await serverSecret(env, runtime.dataDir);
  const blobs = await createBlobStore(
    blobStoreConfigFromEnv(env, {
      driver: 'fs',
      fsRoot: join(runtime.dataDir, 'blobs'),
      signingSecret: `blob:${secret}`,
      publicBaseUrl: runtime.publicBaseUrl,
    }),
  );
  const bus = await createRuntimeBus(runtime, 'gateway', logger);
  const app = await createHttpApp(
    serviceAppModule(
      'gateway',
      logger,
      bus,
      [blobStoreHealthCheck(blobs)],
      [StorageModule.forRoot(blobs), GatewayModule.forRoot({ accessCacheTtlSeconds, corsOrigins, blockingRefreshMs })],
    ),
    logger,
    (a) => configureGatewayHttp(a, { logger, ...httpOptions }),
  );
  // SIGTERM: stop taking work, finish what is in flight, flush, close (SHUTDOWN_GRACE_MS, docs/operations.md).
  shutdownOnSignals(logger, app, bus, runtime.shutdownGraceMs, async () => {
    await blobs.close();
  });
  await app.listen(port, env['HOST'] ?? '0.0.0.0');
  logger.info({ port }, `gateway listening on http://localhost:${port}`);
});
