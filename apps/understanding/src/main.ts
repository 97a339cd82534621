import 'reflect-metadata';
import { join } from 'node:path';
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
} from '@kb/platform/runtime';
import { StorageModule, blobStoreConfigFromEnv, blobStoreHealthCheck, createBlobStore } from '@kb/platform/storage';
import { configureUseLitePool, readProcessingCapacity, useLiteWorker, readSandboxLimits, UnderstandingModule } from '@kb/understanding';

/**
 * Processing workers, scaled on their own (replicas share the durable work queue). They read
 * uploaded files from, and write results and thumbnails to, the same blob store as content.
 */
const logger = createLogger({ service: 'understanding', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8083);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'nats', port });
  // One model worker per core by default, and enough jobs at once to keep them on full batches.
  const { embeddingWorkers, embeddingEngine, concurrency } = readProcessingCapacity(reader);
  const consumeJobs = reader.bool('PROCESSING_WORKERS_ENABLED', true);
  const outboundPolicy = outboundPolicyFromEnv(reader);
  const ackWaitMs = reader.int('PROCESSING_ACK_WAIT_MS', 30_000, { min: 1_000, max: 3_600_000 });
  const transcriptionModelDir = reader.optional('TRANSCRIPTION_MODEL_DIR');
  const embeddingModelDir = reader.optional('EMBEDDING_MODEL_DIR');
  const rerankerModelDir = reader.optional('RERANKER_MODEL_DIR');
  const webhookBackoffMs = reader
    .list('WEBHOOK_RETRY_BACKOFF_MS')
    .map(Number)
    .filter((n) => Number.isFinite(n) && n >= 0);
  const extractionSandbox = readSandboxLimits(reader);
  reader.done();
  configureOutbound({ policy: outboundPolicy });
  configureUseLitePool({ workers: embeddingWorkers, engine: embeddingEngine });
  const secret = await serverSecret(env, runtime.dataDir);
  const blobs = await createBlobStore(
    blobStoreConfigFromEnv(env, {
      driver: 'fs',
      fsRoot: join(runtime.dataDir, 'blobs'),
      signingSecret: `blob:${secret}`,
      publicBaseUrl: runtime.publicBaseUrl,
    }),
  );
  const bus = await createRuntimeBus(runtime, 'understanding', logger);
  const app = await createHttpApp(
    serviceAppModule(
      'understanding',
      logger,
      bus,
      [blobStoreHealthCheck(blobs)],
      [
        StorageModule.forRoot(blobs),
        UnderstandingModule.forRoot({
          consumeJobs,
          concurrency,
          maxAttempts: 3,
          ackWaitMs,
          transcriptionModelDir,
          embeddingModelDir,
          rerankerModelDir,
          webhookBackoffMs: webhookBackoffMs.length ? webhookBackoffMs : undefined,
          webhookSigningSecret: secret,
          extractionSandbox,
        }),
      ],
    ),
    logger,
  );
  // SIGTERM: stop taking work, finish what is in flight, flush, close (SHUTDOWN_GRACE_MS, docs/operations.md).
  shutdownOnSignals(logger, app, bus, runtime.shutdownGraceMs, async () => {
    // The jobs are drained by now: the model workers finish what they hold (queries) and stop.
    await useLiteWorker().close(Math.floor(runtime.shutdownGraceMs / 10));
    await blobs.close();
  });
  await app.listen(port, env['HOST'] ?? '0.0.0.0');
  logger.info({ port }, 'understanding service ready');
});
