import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AUDIT_BATCH_MAX, ContentSubjects, type AuditRecordedEvent } from '@kb/contracts';
import { AuditPublisher, MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';

/** A batch this large is published at once: the most one message may carry. */
export const AUDIT_BATCH = AUDIT_BATCH_MAX;

/**
 * Activity events of reads and searches (`visited`, `search`, `suggest`, `chat`), published in
 * batches. Published one by one, each event cost the embedded database ~4 statements (the bus row,
 * its claim, the reporting row, the ack) on the one database thread the reads themselves need: a
 * `visited` event per GET made reading a resource twice as slow (docs/benchmarks.md, issue 17).
 * Published as one message (`content.audit.batch`), a batch is one bus job and one reporting
 * statement in the standalone, and one JetStream publish and acknowledgement over NATS (the
 * distributed read path paid one of each per event). Never fails the request: events lost to a bus
 * outage are logged.
 * Events still waiting at shutdown are published then.
 *
 * Write events (`new`, `modified`, `deleted`) do not come here: they go through the outbox in the
 * write's own transaction.
 */
@Injectable()
export class AuditBatchService implements OnModuleDestroy {
  private readonly publisher: AuditPublisher;

  constructor(@Inject(MESSAGE_BUS) bus: MessageBus, @Inject(LOGGER) logger: Logger) {
    this.publisher = new AuditPublisher(bus, ContentSubjects.auditBatch, (events, err) =>
      logger.warn(
        { err: err instanceof Error ? err.message : String(err), events: events.length, kbid: events[0]?.kbid },
        'audit events not published',
      ),
    );
  }

  record(event: AuditRecordedEvent): void {
    this.publisher.record(event);
  }

  /** Publishes the waiting events as one message (`content.audit.batch`). */
  flush(): Promise<void> {
    return this.publisher.flush();
  }

  /** Shutdown: the waiting events go out, and the publishes under way finish, before the bus closes. */
  onModuleDestroy(): Promise<void> {
    return this.publisher.close();
  }
}
