import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccountsModule } from '@kb/accounts';
import { ContentModule, type VectorIndexKind } from '@kb/content';
import { GatewayModule } from '@kb/gateway';
import { dbHealthCheck } from '@kb/platform/database';
import { MessagingModule, type MessageBus } from '@kb/platform/messaging';
import { ObservabilityModule, type Logger } from '@kb/platform/observability';
import { StorageModule, blobStoreHealthCheck, type BlobStore } from '@kb/platform/storage';
import { ReportingModule } from '@kb/reporting';
import { UnderstandingModule, type SandboxLimits } from '@kb/understanding';

export interface StandaloneParts {
  logger: Logger;
  bus: MessageBus;
  blobs: BlobStore;
  dataSources: { accounts: DataSource; content: DataSource; reporting: DataSource; bus: DataSource };
  zone: string;
  secret: string;
  accessCacheTtlSeconds: number;
  corsOrigins: string[];
  userTokenTtlSeconds: number;
  publicBaseUrl: string;
  smtp?: { url: string; from: string };
  /** DNS servers for SSO domain verification (default: the system's). */
  dnsServers?: string[];
  processing: {
    consumeJobs: boolean;
    concurrency: number;
    maxAttempts: number;
    ackWaitMs?: number;
    webhookBackoffMs?: number[];
    transcriptionModelDir?: string;
    embeddingModelDir?: string;
    rerankerModelDir?: string;
    extractionSandbox?: SandboxLimits;
  };
  consumeProcessingResults: boolean;
  /** Search indexes in memory (SEARCH_MEMORY_MB, SEARCH_MEMORY_MAX_PARAGRAPHS; docs/decisions/0014). */
  searchMemory?: { budgetBytes: number; maxParagraphs: number };
  /** ACTIVITY_QUERY_TIMEOUT_MS (ReportingOptions.activityQueryTimeoutMs). */
  activityQueryTimeoutMs?: number;
  /** USAGE_BLOCKING_SWEEP_MS, USAGE_LIMITS_CACHE_MS (ReportingOptions), USAGE_BLOCKING_REFRESH_MS (GatewayOptions.blockingRefreshMs). */
  usage?: { blockingSweepMs: number; limitsCacheMs: number; blockingRefreshMs: number };
  /** REMI_POLL_MS, REMI_SEMANTIC, REMI_JUDGE* (ReportingOptions; docs/remi.md), ACTIVITY_CHAIN_SEAL_MS (docs/activity.md). */
  remi?: {
    remiPollMs: number;
    remiSemantic: boolean;
    remiJudge: boolean;
    remiJudgeTimeoutMs: number;
    remiJudgeConcurrency: number;
    chainSealMs: number;
  };
  /** SEARCH_VECTOR_INDEX (ContentOptions.vectorIndex). */
  vectorIndex?: VectorIndexKind;
}

/** Every service's root module in one process, on one in-process bus. */
@Module({})
export class StandaloneModule {
  static forRoot(p: StandaloneParts): DynamicModule {
    return {
      module: StandaloneModule,
      imports: [
        ObservabilityModule.forRoot({
          service: 'standalone',
          logger: p.logger,
          checks: [
            ...Object.entries(p.dataSources).map(([name, ds]) => ({ name: `db:${name}`, check: () => dbHealthCheck(ds) })),
            { name: 'bus', check: () => p.bus.isHealthy() },
            blobStoreHealthCheck(p.blobs),
          ],
        }),
        MessagingModule.forRoot(p.bus),
        StorageModule.forRoot(p.blobs),
        AccountsModule.forRoot({
          dataSource: p.dataSources.accounts,
          zone: p.zone,
          secret: p.secret,
          userTokenTtlSeconds: p.userTokenTtlSeconds,
          publicBaseUrl: p.publicBaseUrl,
          smtp: p.smtp,
          dnsServers: p.dnsServers,
        }),
        ContentModule.forRoot({
          dataSource: p.dataSources.content,
          outboxSweepMs: 2000,
          consumeProcessingResults: p.consumeProcessingResults,
          searchMemory: p.searchMemory,
          vectorIndex: p.vectorIndex,
        }),
        UnderstandingModule.forRoot({ ...p.processing, webhookSigningSecret: p.secret }),
        ReportingModule.forRoot({
          dataSource: p.dataSources.reporting,
          activityQueryTimeoutMs: p.activityQueryTimeoutMs,
          ...(p.usage ? { blockingSweepMs: p.usage.blockingSweepMs, limitsCacheMs: p.usage.limitsCacheMs } : {}),
          ...p.remi,
          smtp: p.smtp,
        }),
        GatewayModule.forRoot({
          accessCacheTtlSeconds: p.accessCacheTtlSeconds,
          corsOrigins: p.corsOrigins,
          blockingRefreshMs: p.usage?.blockingRefreshMs,
        }),
      ],
    };
  }
}
