import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { asRow } from '@kb/platform/database';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { TransactionalOutbox, type OutboxEntry as PlatformOutboxEntry, type OutboxRow } from '@kb/platform/outbox';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, type ContentOptions } from '../content.tokens';
import type { ContentOutboxKind } from '../entities/outbox.entity';
import { ProcessingRequestEntity } from '../entities/processing-request.entity';
import { processingRequestsOf } from '../processing/processing-requests';

export interface OutboxEntry extends PlatformOutboxEntry {
  kind: ContentOutboxKind;
}

/**
 * Content's transactional outbox (`content.outbox`, see @kb/platform/outbox): bus messages, and
 * blob deletion (`blob_cleanup`: the target is a blob prefix, or one key when it does not end with `/`). A field job also gets its processing
 * status record, in the same transaction as its row.
 */
@Injectable()
export class OutboxService extends TransactionalOutbox implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) ds: DataSource,
    @Inject(CONTENT_OPTIONS) options: ContentOptions,
    @Inject(MESSAGE_BUS) bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) logger: Logger,
  ) {
    super({ dataSource: ds, schema: 'content', bus, logger, sweepMs: options.outboxSweepMs, firstRetryMs: options.outboxFirstRetryMs });
  }

  /** Inserts the rows, and a processing status record for each field job among them. */
  override async insertRows(manager: EntityManager, rows: OutboxRow[]): Promise<void> {
    await super.insertRows(manager, rows);
    const requests = processingRequestsOf(rows);
    if (requests.length > 0) await manager.insert(ProcessingRequestEntity, requests.map(asRow));
  }

  protected override async executeOther(row: OutboxRow): Promise<void> {
    if (row.kind !== 'blob_cleanup') throw new Error(`Unknown outbox kind ${row.kind}`);
    // A prefix ends with a slash; anything else names one object (a replaced processing artefact).
    if (row.target.endsWith('/')) await this.blobs.deletePrefix(row.target);
    else await this.blobs.delete(row.target);
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }
}
