import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { extractedBlobKey, fieldBlobPrefix, UnderstandingSubjects, type FieldProcessedResult, type ProcessFieldJob } from '@kb/contracts';
import { MESSAGE_BUS, type DeliveryMeta, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, processingJobs, type Logger } from '@kb/platform/observability';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { warmUpTextAnalysis } from './analysis';
import { finalError } from './extracted-error';
import { FieldProcessorService } from './field-processor.service';
import { storedArtefacts } from './stored-artefacts';

/**
 * Consumes the processing queue. A job is acknowledged only once its result is on the results
 * queue. The result (vectors make it large) is written to the blob store first and only its key
 * rides the bus; the key carries the seqid, so a redelivered job rewrites the same object.
 * Failures are retried with backoff; the last failed attempt publishes an error result, so the
 * field ends in ERROR instead of staying PENDING forever.
 */
@Injectable()
export class ProcessingWorkerService implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly processor: FieldProcessorService,
    @Optional() @Inject(BLOB_STORE) private readonly blobs?: BlobStore,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.consumeJobs) return;
    // Before the first job: loaded on first use, these models block the event loop for seconds (see warmUpTextAnalysis).
    this.logger.info({ duration_ms: warmUpTextAnalysis() }, 'text analysis models loaded');
    await this.bus.consume(UnderstandingSubjects.processField, (job, meta) => this.handle(job, meta), {
      durable: 'understanding-workers',
      concurrency: this.options.concurrency,
      maxDeliver: this.options.maxAttempts + 1,
      backoffMs: [1000, 5000, 30000],
      ackWaitMs: this.options.ackWaitMs ?? 30_000,
      maxWorkingMs: this.options.maxJobMs ?? 6 * 3600_000,
    });
  }

  async handle(job: ProcessFieldJob, meta: DeliveryMeta): Promise<void> {
    const ids = {
      processing_id: job.processing_id,
      kbid: job.kbid,
      rid: job.rid,
      field_type: job.field_type,
      field_id: job.field_id,
      seqid: job.seqid,
    };
    let result: FieldProcessedResult;
    try {
      const outcome = await this.processor.process(job);
      if ('error' in outcome) {
        result = { ...ids, error: outcome.error };
      } else {
        if (!this.blobs) throw new Error('this process has no blob store for processing results');
        const key = extractedBlobKey(job);
        const stat = await this.blobs.put(key, JSON.stringify(outcome.extracted), { contentType: 'application/json' });
        // What this result holds in the store, as written, travels with it (metered as storage_bytes).
        result = {
          ...ids,
          extracted_key: key,
          stored_bytes: { ...storedArtefacts(outcome.extracted, fieldBlobPrefix(job)), [key]: stat.size },
        };
      }
    } catch (err) {
      this.logger.warn(
        { processing_id: job.processing_id, attempt: meta.deliveryCount, err: (err as Error).message },
        'processing attempt failed',
      );
      if (meta.deliveryCount < this.options.maxAttempts) throw err;
      processingJobs.labels('understanding', 'failed').inc();
      await this.bus.enqueue(
        UnderstandingSubjects.fieldProcessed,
        { ...ids, error: finalError(err, meta.deliveryCount), retries: meta.deliveryCount - 1 },
        { msgId: `${job.processing_id}:result` },
      );
      this.done(ids, meta, 'failed');
      return;
    }
    await this.bus.enqueue(
      UnderstandingSubjects.fieldProcessed,
      { ...result, retries: meta.deliveryCount - 1 },
      { msgId: `${job.processing_id}:result` },
    );
    const outcome = result.error ? 'field_error' : 'processed';
    processingJobs.labels('understanding', outcome).inc();
    this.done(ids, meta, outcome);
  }

  /** One line per job finished here (its result on the results queue): which worker did which job, and how often. */
  private done(ids: { processing_id: string; kbid: string; rid: string }, meta: DeliveryMeta, outcome: string): void {
    this.logger.info(
      { processing_id: ids.processing_id, kbid: ids.kbid, rid: ids.rid, attempt: meta.deliveryCount, outcome },
      'processing job done',
    );
  }
}
