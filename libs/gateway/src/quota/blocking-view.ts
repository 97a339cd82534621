import { ReportingSubjects, type AccountBlockingDto } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';

export interface BlockingViewOptions {
  /** How often the whole picture is fetched again (a missed event is corrected within this). */
  refreshMs: number;
}

const monthNow = (): string => new Date().toISOString().slice(0, 7);

/**
 * The blocks of exhausted usage limits, held in memory for the admission check of every request
 * (issue 19): reporting broadcasts each change, and the whole list is fetched at start and every
 * `refreshMs`. A block of another month than the current UTC one is void, so the turn of the month
 * unblocks at once, before reporting's sweep says so.
 */
export class BlockingView {
  private blocks = new Map<string, AccountBlockingDto>();
  private timer: NodeJS.Timeout | undefined;
  /** When each account's last event arrived: an event newer than the start of a list read wins over the list. */
  private readonly eventAt = new Map<string, number>();

  constructor(
    private readonly bus: MessageBus,
    private readonly options: BlockingViewOptions,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    // Ephemeral subscription: every gateway replica hears every change.
    await this.bus.subscribe(ReportingSubjects.blockingChanged, async (e) => this.apply(e));
    // Not awaited: reporting may start after the gateway (and in one process, after this provider).
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  apply(e: AccountBlockingDto): void {
    this.eventAt.set(e.account_id, Date.now());
    if (e.features.length === 0 && Object.keys(e.kbs ?? {}).length === 0) this.blocks.delete(e.account_id);
    else this.blocks.set(e.account_id, e);
  }

  async refresh(): Promise<void> {
    const started = Date.now();
    try {
      const list = await this.bus.request(ReportingSubjects.listBlocking, {});
      const next = new Map<string, AccountBlockingDto>();
      for (const b of list) next.set(b.account_id, b);
      for (const [account, at] of this.eventAt) {
        if (at < started) {
          this.eventAt.delete(account);
          continue;
        }
        // Changed while the list was read: the event is the newer word.
        const known = this.blocks.get(account);
        if (known) next.set(account, known);
        else next.delete(account);
      }
      this.blocks = next;
    } catch (err) {
      this.onError(err as Error);
    }
  }

  /** The first of `features` blocked for this account (or this KB of it), or null: a Map read, nothing else. */
  blocked(accountId: string | undefined, kbid: string | undefined, features: readonly string[]): string | null {
    if (!accountId) return null;
    const b = this.blocks.get(accountId);
    if (!b || b.month !== monthNow()) return null;
    for (const f of features) {
      if (b.features.includes(f)) return f;
      if (kbid && b.kbs?.[kbid]?.includes(f)) return f;
    }
    return null;
  }
}
