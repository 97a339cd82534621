import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AUDIT_BATCH_MAX, ContentSubjects, type AuditRecordedEvent } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';

/** An event waits at most this long for others to be published with. */
export const AUDIT_FLUSH_MS = 200;
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
  private pending: AuditRecordedEvent[] = [];
  private timer?: NodeJS.Timeout;
  private readonly sending = new Set<Promise<void>>();

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  record(event: AuditRecordedEvent): void {
    this.pending.push(event);
    if (this.pending.length >= AUDIT_BATCH) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), AUDIT_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Publishes the waiting events as one message (`content.audit.batch`). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    const first = batch[0] as AuditRecordedEvent;
    // Each event is in one batch only: its first event's id and the size name the batch, so a
    // publish retried by the transport is stored once.
    const sent = [
      this.bus
        .publish(ContentSubjects.auditBatch, { events: batch }, { msgId: `batch:${first.event_id}:${batch.length}` })
        .catch((err: unknown) => {
          this.logger.warn(
            { err: err instanceof Error ? err.message : String(err), events: batch.length, kbid: first.kbid },
            'audit events not published',
          );
        }),
    ];
    const all = Promise.all(sent).then(() => undefined);
    this.sending.add(all);
    void all.finally(() => this.sending.delete(all));
    return all;
  }

  /** Shutdown: the waiting events go out, and the publishes under way finish, before the bus closes. */
  async onModuleDestroy(): Promise<void> {
    await this.flush();
    await Promise.all([...this.sending]);
  }
}
