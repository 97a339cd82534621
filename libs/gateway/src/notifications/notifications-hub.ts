import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ContentSubjects, DomainError, ErrorCodes, type KbNotificationEvent } from '@kb/contracts';
import { MESSAGE_BUS, type LiveSubscription, type MessageBus } from '@kb/platform/messaging';
import { NotificationReader, notificationLine, type LineSink, type ReaderOptions } from './notification-reader';

export interface NotificationLimits extends ReaderOptions {
  /** Open streams per KB on this gateway replica. */
  perKb: number;
  /** Open streams per caller (user, or service account) on this replica. */
  perCaller: number;
}

export const DEFAULT_NOTIFICATION_LIMITS: NotificationLimits = {
  perKb: 50,
  perCaller: 5,
  maxPending: 500,
  heartbeatMs: 10_000,
  maxDurationMs: 120_000,
  dropGraceMs: 30_000,
};

export const NOTIFICATION_LIMITS = Symbol('NOTIFICATION_LIMITS');

interface KbEntry {
  readers: Set<NotificationReader>;
  /** Readers admitted, including those whose subscription is being set up. */
  admitted: number;
  subscription: Promise<LiveSubscription>;
}

/**
 * The notification readers of this gateway replica. It listens on the bus only to the KBs its
 * readers follow (`content.kb-notification.emitted.<kbid>`), from the first reader of a KB to the
 * last, so a replica receives nothing of the other KBs and every replica serves its own readers.
 */
@Injectable()
export class NotificationsHub implements OnModuleDestroy {
  private readonly kbs = new Map<string, KbEntry>();
  private readonly callers = new Map<string, number>();

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(NOTIFICATION_LIMITS) private readonly limits: NotificationLimits,
  ) {}

  /**
   * Admits a reader of `kbid` for `caller` (429 past the limits), and resolves once the KB's
   * notifications reach this replica; `start` then gets the reader to hand its sink to.
   */
  async open(kbid: string, caller: string, sink: LineSink, start: () => void): Promise<NotificationReader> {
    const entry = this.kbs.get(kbid);
    if ((entry?.admitted ?? 0) >= this.limits.perKb)
      throw new DomainError(ErrorCodes.RATE_LIMITED, `This Knowledge Box has ${this.limits.perKb} notification streams open already`);
    if ((this.callers.get(caller) ?? 0) >= this.limits.perCaller)
      throw new DomainError(ErrorCodes.RATE_LIMITED, `You have ${this.limits.perCaller} notification streams open already`);
    const kb = entry ?? this.follow(kbid);
    kb.admitted++;
    this.callers.set(caller, (this.callers.get(caller) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.release(kbid, kb, caller);
    };
    try {
      await kb.subscription;
    } catch (err) {
      release();
      throw err;
    }
    start();
    const reader = new NotificationReader(sink, this.limits, () => {
      kb.readers.delete(reader);
      release();
    });
    kb.readers.add(reader);
    // The first line says the stream is live: whatever happens in the KB from now on is sent.
    reader.push(notificationLine({ type: 'heartbeat', data: {} }));
    return reader;
  }

  /** Streams open on this replica (all KBs, or one). */
  openStreams(kbid?: string): number {
    if (kbid) return this.kbs.get(kbid)?.readers.size ?? 0;
    let n = 0;
    for (const kb of this.kbs.values()) n += kb.readers.size;
    return n;
  }

  onModuleDestroy(): void {
    for (const kb of [...this.kbs.values()]) for (const reader of [...kb.readers]) reader.close('shutdown');
  }

  private follow(kbid: string): KbEntry {
    const entry: KbEntry = { readers: new Set(), admitted: 0, subscription: Promise.resolve(undefined as never) };
    entry.subscription = this.bus.subscribeLive(ContentSubjects.kbNotification, kbid, (n: KbNotificationEvent) => {
      if (n.kbid !== kbid) return;
      const line = notificationLine({ type: n.type, data: { ...n.data } });
      for (const reader of [...entry.readers]) reader.push(line);
    });
    this.kbs.set(kbid, entry);
    return entry;
  }

  private release(kbid: string, kb: KbEntry, caller: string): void {
    kb.admitted--;
    const left = (this.callers.get(caller) ?? 1) - 1;
    if (left <= 0) this.callers.delete(caller);
    else this.callers.set(caller, left);
    if (kb.admitted > 0) return;
    if (this.kbs.get(kbid) === kb) this.kbs.delete(kbid);
    void kb.subscription.then((s) => s.close()).catch(() => undefined);
  }
}
