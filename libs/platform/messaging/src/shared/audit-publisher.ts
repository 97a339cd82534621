import { AUDIT_BATCH_MAX, ContentSubjects, type AuditRecordedEvent } from '@kb/contracts';
import type { MessageBus } from '../message-bus';

/** An event waits at most this long for others to be published with. */
export const AUDIT_FLUSH_MS = 200;

/**
 * Activity events published in batches on `content.audit.batch`: a batch of up to AUDIT_BATCH_MAX
 * goes out when full or AUDIT_FLUSH_MS after its first event. Published one by one, each event cost
 * the embedded database ~4 statements (the bus row, its claim, the reporting row, the ack) on the
 * one database thread the requests need; a batch is one bus job and one reporting statement in the
 * standalone, and one JetStream publish over NATS. Never fails the caller: events lost to a bus
 * outage are reported to `onLost`. Each event is in one batch only, named by its first event's id
 * and its size, so a publish the transport retries is stored once. `close()` publishes what waits
 * and awaits the publishes under way (shutdown, before the bus closes).
 */
export class AuditPublisher {
  private pending: AuditRecordedEvent[] = [];
  private timer?: NodeJS.Timeout;
  private readonly sending = new Set<Promise<void>>();

  /** `subject` is always `ContentSubjects.auditBatch`; it is named at each use so the bus-usage scan sees who publishes it. */
  constructor(
    private readonly bus: MessageBus,
    private readonly subject: typeof ContentSubjects.auditBatch,
    private readonly onLost: (events: AuditRecordedEvent[], err: unknown) => void,
    private readonly flushMs = AUDIT_FLUSH_MS,
  ) {}

  record(event: AuditRecordedEvent): void {
    this.pending.push(event);
    if (this.pending.length >= AUDIT_BATCH_MAX) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Publishes the waiting events as one message. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    const first = batch[0] as AuditRecordedEvent;
    const sent = this.bus
      .publish(this.subject, { events: batch }, { msgId: `batch:${first.event_id}:${batch.length}` })
      .catch((err: unknown) => {
        this.onLost(batch, err);
      });
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
    return sent;
  }

  /** The waiting events go out, and the publishes under way finish. */
  async close(): Promise<void> {
    await this.flush();
    await Promise.all([...this.sending]);
  }
}
