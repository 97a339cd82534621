import 'reflect-metadata';
import { join } from 'node:path';
import { CONTENT_ENTITIES, CONTENT_MIGRATIONS, ContentModule, VECTOR_INDEX_KINDS } from '@kb/content';
import { configureOutbound, outboundPolicyFromEnv } from '@kb/platform/net';
import { createLogger } from '@kb/platform/observability';
import {
  createHttpApp,
  createRuntimeBus,
  readRuntimeEnv,
  runMain,
  shutdownOnSignals,
  serverSecret,
  serviceAppModule,
  serviceDataSource,
} from '@kb/platform/runtime';
import { StorageModule, blobStoreConfigFromEnv, blobStoreHealthCheck, createBlobStore } from '@kb/platform/storage';

/** The content service as its own process. Its schema needs pgvector (CONTENT_DATABASE_URL). */
const logger = createLogger({ service: 'content', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8082);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'nats', port });
  const consumeResults = reader.bool('PROCESSING_RESULTS_ENABLED', true);
  const vectorIndex = reader.oneOf('SEARCH_VECTOR_INDEX', VECTOR_INDEX_KINDS, 'hnsw');
  const searchMemory = {
    budgetBytes: reader.int('SEARCH_MEMORY_MB', 256, { min: 0, max: 1_048_576 }) * 1024 * 1024,
    maxParagraphs: reader.int('SEARCH_MEMORY_MAX_PARAGRAPHS', 200_000, { min: 0 }),
  };
  const outboundPolicy = outboundPolicyFromEnv(reader);
  reader.done();
  // Content calls generative providers (/ask, question/answer pairs) through the guarded client.
  configureOutbound({ policy: outboundPolicy });
  const secret = await serverSecret(env, runtime.dataDir);
  const db = await serviceDataSource(env, runtime, 'content', CONTENT_ENTITIES, CONTENT_MIGRATIONS);
  const blobs = await createBlobStore(
    blobStoreConfigFromEnv(env, {
      driver: 'fs',
      fsRoot: join(runtime.dataDir, 'blobs'),
      signingSecret: `blob:${secret}`,
      publicBaseUrl: runtime.publicBaseUrl,
    }),
  );
  const bus = await createRuntimeBus(runtime, 'content', logger);
  const app = await createHttpApp(
    serviceAppModule(
      'content',
      logger,
      bus,
      [db.check, blobStoreHealthCheck(blobs)],
      [
        StorageModule.forRoot(blobs),
        ContentModule.forRoot({
          dataSource: db.dataSource,
          outboxSweepMs: 2000,
          consumeProcessingResults: consumeResults,
          searchMemory,
          vectorIndex,
        }),
      ],
    ),
    logger,
  );
  // SIGTERM: stop taking work, finish what is in flight, flush, close (SHUTDOWN_GRACE_MS, docs/operations.md).
  shutdownOnSignals(logger, app, bus, runtime.shutdownGraceMs, async () => {
    await blobs.close();
    await db.close();
  });
  await app.listen(port, env['HOST'] ?? '0.0.0.0');
  logger.info({ port }, 'content service ready');
});
