import 'reflect-metadata';
import { createLogger } from '@kb/platform/observability';
import { join } from 'node:path';
import {
  createHttpApp,
  createRuntimeBus,
  readRuntimeEnv,
  runMain,
  serverSecret,
  shutdownOnSignals,
  serviceAppModule,
  serviceDataSource,
} from '@kb/platform/runtime';
import { StorageModule, blobStoreConfigFromEnv, blobStoreHealthCheck, createBlobStore } from '@kb/platform/storage';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS, ReportingModule } from '@kb/reporting';

/** Reporting (activity logs, usage, answer-quality scores) as its own process. */
const logger = createLogger({ service: 'reporting', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8084);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'nats', port });
  const activityQueryTimeoutMs = reader.int('ACTIVITY_QUERY_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 });
  const blockingSweepMs = reader.int('USAGE_BLOCKING_SWEEP_MS', 60_000, { min: 100, max: 3_600_000 });
  const limitsCacheMs = reader.int('USAGE_LIMITS_CACHE_MS', 60_000, { min: 0, max: 3_600_000 });
  // The REMi scorer (docs/remi.md).
  const remiPollMs = reader.int('REMI_POLL_MS', 1000, { min: 0, max: 3_600_000 });
  const remiSemantic = reader.bool('REMI_SEMANTIC', true);
  const remiJudge = reader.bool('REMI_JUDGE', true);
  const remiJudgeTimeoutMs = reader.int('REMI_JUDGE_TIMEOUT_MS', 60_000, { min: 1000, max: 600_000 });
  const remiJudgeConcurrency = reader.int('REMI_JUDGE_CONCURRENCY', 2, { min: 1, max: 32 });
  // The activity log's hash chains (docs/activity.md).
  const chainSealMs = reader.int('ACTIVITY_CHAIN_SEAL_MS', 1000, { min: 0, max: 3_600_000 });
  // The e-mail notice of a ready activity download (docs/activity.md); without SMTP it is refused.
  const smtpUrl = reader.optional('SMTP_URL');
  const smtp = smtpUrl ? { url: smtpUrl, from: reader.string('SMTP_FROM', 'Knowledge Box Service <no-reply@localhost>') } : undefined;
  reader.done();
  const db = await serviceDataSource(env, runtime, 'reporting', REPORTING_ENTITIES, REPORTING_MIGRATIONS);
  // Activity downloads are written to the blob store; their links are signed like every other file's.
  const secret = await serverSecret(env, runtime.dataDir);
  const blobs = await createBlobStore(
    blobStoreConfigFromEnv(env, {
      driver: 'fs',
      fsRoot: join(runtime.dataDir, 'blobs'),
      signingSecret: `blob:${secret}`,
      publicBaseUrl: runtime.publicBaseUrl,
    }),
  );
  const bus = await createRuntimeBus(runtime, 'reporting', logger);
  const app = await createHttpApp(
    serviceAppModule(
      'reporting',
      logger,
      bus,
      [db.check, blobStoreHealthCheck(blobs)],
      [
        StorageModule.forRoot(blobs),
        ReportingModule.forRoot({
          dataSource: db.dataSource,
          activityQueryTimeoutMs,
          blockingSweepMs,
          limitsCacheMs,
          remiPollMs,
          remiSemantic,
          remiJudge,
          remiJudgeTimeoutMs,
          remiJudgeConcurrency,
          chainSealMs,
          smtp,
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
  logger.info({ port }, 'reporting service ready');
});
