import 'reflect-metadata';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BootstrapService } from '@kb/accounts';
import { VECTOR_INDEX_KINDS } from '@kb/content';
import { configureGatewayHttp, gatewayHttpEnv } from '@kb/gateway';
import { closeServiceDataSource, createServiceDataSource, databaseUrlFromEnv, type ServiceMigrations } from '@kb/platform/database';
import { configureOutbound, outboundPolicyFromEnv } from '@kb/platform/net';
import { createLogger } from '@kb/platform/observability';
import { createRuntimeBus, createHttpApp, readRuntimeEnv, runMain, shutdownOnSignals, serverSecret } from '@kb/platform/runtime';
import { blobStoreConfigFromEnv, createBlobStore } from '@kb/platform/storage';
import { configureUseLitePool, readProcessingCapacity, useLiteWorker, readSandboxLimits } from '@kb/understanding';
import { SERVICE_SCHEMAS } from './schemas';
import { StandaloneModule } from './standalone.module';

/**
 * The embedded default: every service in one process on PGlite, the in-process bus and blobs on
 * disk under DATA_DIR. `npm start` runs this.
 */
const logger = createLogger({ service: 'standalone', level: process.env['LOG_LEVEL'] ?? 'info' });

runMain(logger, async () => {
  const env = process.env;
  const port = Number(env['PORT'] ?? 8080);
  const { runtime, reader } = readRuntimeEnv(env, { transport: 'inprocess', port });
  const adminEmail = reader.string('ADMIN_EMAIL', 'admin@localhost');
  const accessCacheTtlSeconds = reader.int('ACCESS_CACHE_TTL_SECONDS', 5, { min: 0, max: 300 });
  // One model worker per core by default, and enough jobs at once to keep them on full batches.
  const { embeddingWorkers, embeddingEngine, concurrency: processingConcurrency } = readProcessingCapacity(reader);
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
  const httpOptions = gatewayHttpEnv(reader);
  const extractionSandbox = readSandboxLimits(reader);
  const vectorIndex = reader.oneOf('SEARCH_VECTOR_INDEX', VECTOR_INDEX_KINDS, 'hnsw');
  const searchMemory = {
    budgetBytes: reader.int('SEARCH_MEMORY_MB', 256, { min: 0, max: 1_048_576 }) * 1024 * 1024,
    maxParagraphs: reader.int('SEARCH_MEMORY_MAX_PARAGRAPHS', 200_000, { min: 0 }),
  };
  const corsOrigins = reader.list('CORS_ORIGINS');
  const activityQueryTimeoutMs = reader.int('ACTIVITY_QUERY_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 });
  const usage = {
    blockingSweepMs: reader.int('USAGE_BLOCKING_SWEEP_MS', 60_000, { min: 100, max: 3_600_000 }),
    limitsCacheMs: reader.int('USAGE_LIMITS_CACHE_MS', 60_000, { min: 0, max: 3_600_000 }),
    blockingRefreshMs: reader.int('USAGE_BLOCKING_REFRESH_MS', 30_000, { min: 100, max: 3_600_000 }),
  };
  // The REMi scorer (docs/remi.md).
  const remi = {
    remiPollMs: reader.int('REMI_POLL_MS', 1000, { min: 0, max: 3_600_000 }),
    remiSemantic: reader.bool('REMI_SEMANTIC', true),
    remiJudge: reader.bool('REMI_JUDGE', true),
    remiJudgeTimeoutMs: reader.int('REMI_JUDGE_TIMEOUT_MS', 60_000, { min: 1000, max: 600_000 }),
    remiJudgeConcurrency: reader.int('REMI_JUDGE_CONCURRENCY', 2, { min: 1, max: 32 }),
    // The activity log's hash chains (docs/activity.md).
    chainSealMs: reader.int('ACTIVITY_CHAIN_SEAL_MS', 1000, { min: 0, max: 3_600_000 }),
  };
  const smtpUrl = reader.optional('SMTP_URL');
  const smtp = smtpUrl ? { url: smtpUrl, from: reader.string('SMTP_FROM', 'Knowledge Box Service <no-reply@localhost>') } : undefined;
  // Where SSO domain verification asks for TXT records (`host` or `host:port`, comma-separated); default: the system's resolvers.
  const dnsServers = reader.list('DNS_SERVERS');
  reader.done();
  configureOutbound({ policy: outboundPolicy });
  configureUseLitePool({ workers: embeddingWorkers, engine: embeddingEngine });

  const secret = await serverSecret(env, runtime.dataDir);
  const pgDir = join(runtime.dataDir, 'pg');
  const source = (service: string, { schema, entities, migrations }: ServiceMigrations) =>
    createServiceDataSource({
      service,
      schema,
      url: databaseUrlFromEnv(env, service),
      dataDir: pgDir,
      entities,
      migrations,
      runMigrations: true,
    });
  const dataSources = {
    accounts: await source('accounts', SERVICE_SCHEMAS.accounts),
    content: await source('content', SERVICE_SCHEMAS.content),
    reporting: await source('reporting', SERVICE_SCHEMAS.reporting),
    bus: await source('bus', { schema: 'bus', entities: [], migrations: [] }),
  };
  const blobs = await createBlobStore(
    blobStoreConfigFromEnv(env, {
      driver: 'fs',
      fsRoot: join(runtime.dataDir, 'blobs'),
      signingSecret: `blob:${secret}`,
      publicBaseUrl: runtime.publicBaseUrl,
    }),
  );
  const bus = await createRuntimeBus(runtime, 'standalone', logger, dataSources.bus);

  const app = await createHttpApp(
    StandaloneModule.forRoot({
      logger,
      bus,
      blobs,
      dataSources,
      zone: runtime.zone,
      secret,
      accessCacheTtlSeconds,
      corsOrigins,
      userTokenTtlSeconds: 3600,
      publicBaseUrl: runtime.publicBaseUrl,
      smtp,
      dnsServers,
      processing: {
        consumeJobs,
        concurrency: processingConcurrency,
        maxAttempts: 3,
        ackWaitMs,
        transcriptionModelDir,
        embeddingModelDir,
        rerankerModelDir,
        webhookBackoffMs: webhookBackoffMs.length ? webhookBackoffMs : undefined,
        extractionSandbox,
      },
      consumeProcessingResults: true,
      searchMemory,
      vectorIndex,
      activityQueryTimeoutMs,
      usage,
      remi,
    }),
    logger,
    (a) => configureGatewayHttp(a, { logger, ...httpOptions }),
  );
  // SIGTERM: stop taking work, finish what is in flight, flush, close (SHUTDOWN_GRACE_MS, docs/operations.md).
  shutdownOnSignals(logger, app, bus, runtime.shutdownGraceMs, async () => {
    // The jobs are drained by now: the model workers finish what they hold (queries) and stop.
    await useLiteWorker().close(Math.floor(runtime.shutdownGraceMs / 10));
    await blobs.close();
    for (const ds of Object.values(dataSources)) await closeServiceDataSource(ds);
  });
  // Bootstrap before listening: once the service answers, its first credentials exist.
  await app.init();

  const bootstrap = await app.get(BootstrapService, { strict: false }).ensure(adminEmail);
  if (bootstrap) {
    const file = join(runtime.dataDir, 'bootstrap.json');
    await writeFile(file, JSON.stringify(bootstrap, null, 2) + '\n', { mode: 0o600 });
    await chmod(file, 0o600);
    // Printed once, on the first start only: these secrets are not stored anywhere in clear.
    process.stdout.write(
      `\nFirst start: created an administrator, an account, its default Knowledge Box and a Manager API key.\n` +
        `  user:     ${bootstrap.user.email}  password: ${bootstrap.user.password}\n` +
        `  account:  ${bootstrap.account.id} (slug ${bootstrap.account.slug})\n` +
        `  kb:       ${bootstrap.kb.id}\n` +
        `  api key:  ${bootstrap.api_key.token}   (X-SVC-SERVICEACCOUNT: Bearer <key>)\n` +
        `  personal access token: ${bootstrap.personal_access_token.token}   (Authorization: Bearer <token>)\n` +
        `Saved to ${file} (mode 0600).\n\n`,
    );
  }
  await app.listen(port, env['HOST'] ?? '0.0.0.0');
  logger.info({ port, data_dir: runtime.dataDir, zone: runtime.zone }, `Knowledge Box Service listening on http://localhost:${port}`);
});
