import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ReportingSubjects, type AccountBlockingDto, type EffectiveLimits } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { decideBlocks, type UsageTotals } from './blocking-rules';

const monthNow = (): string => new Date().toISOString().slice(0, 7);

/** After a batch, an account is decided at most once per this interval (a bound on how late a block comes; docs/usage.md). */
export const USAGE_DECISION_INTERVAL_MS = 250;

/** No limit an account's usage could reach: every monthly and storage limit negative (unlimited) or absent. */
function isUnlimited(limits: EffectiveLimits): boolean {
  return [limits.usage, limits.processing].every((group) => Object.values(group ?? {}).every((v) => typeof v !== 'number' || v < 0));
}
const monthStart = (month: string): string => `${month}-01T00:00:00.000Z`;

interface Stored {
  month: string;
  features: string[];
  kbs: Record<string, string[]>;
}

/**
 * Decides each account's blocks (issue 19) from its counters and limits, after every batch of
 * usage, when its limits change, and when the month turns; records them and tells the gateway
 * (which refuses in memory) and the accounts service (which shows them on the account record).
 */
@Injectable()
export class BlockingService implements OnModuleDestroy {
  private readonly limits = new Map<string, { limits: EffectiveLimits; at: number }>();
  /**
   * Bumped when an account's limits change: an answer to a limits request sent before the change
   * is used by the call that asked, but never cached (it would hide the new limits for
   * `limitsCacheMs`, and with them the blocks they call for).
   */
  private readonly limitsGeneration = new Map<string, number>();
  /** One decision at a time per account in this process: a decision made with older limits never lands after a newer one. */
  private readonly deciding = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** When each account was last decided after a batch, and the decisions waiting for their interval. */
  private readonly decidedAt = new Map<string, number>();
  private readonly later = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Re-decides blocked accounts whose month has turned (or whose limits went stale) every `blockingSweepMs`. */
  start(): void {
    this.timer = setInterval(
      () => void this.sweep().catch((err: Error) => this.logger.warn({ err: err.message }, 'usage blocking sweep failed')),
      this.options.blockingSweepMs,
    );
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.settled();
  }

  /** Limits changed: forget the cached ones and decide again. */
  async limitsChanged(accountId: string): Promise<void> {
    if (this.limitsGeneration.size > 100_000) this.limitsGeneration.clear();
    this.limitsGeneration.set(accountId, (this.limitsGeneration.get(accountId) ?? 0) + 1);
    this.limits.delete(accountId);
    await this.evaluate([accountId]);
  }

  async list(): Promise<AccountBlockingDto[]> {
    const rows: (Stored & { account_id: string })[] = await this.ds.query(
      `SELECT account_id, month, features, kbs FROM reporting.account_blocks WHERE month = $1 AND (features <> '[]'::jsonb OR kbs <> '{}'::jsonb)`,
      [monthNow()],
    );
    return rows.map((r) => this.dto(r.account_id, r));
  }

  async sweep(): Promise<void> {
    // Blocked accounts whose month turned or whose limits may have changed unannounced, and accounts
    // decided lately (two replicas deciding at once may have left the older decision last).
    const rows: { account_id: string }[] = await this.ds.query(
      `SELECT account_id FROM reporting.account_blocks
        WHERE ((features <> '[]'::jsonb OR kbs <> '{}'::jsonb) AND (month <> $1 OR updated_at < now() - ($2::int * interval '1 millisecond')))
           OR updated_at > now() - ($3::int * interval '1 millisecond')`,
      [monthNow(), this.options.limitsCacheMs, 2 * this.options.blockingSweepMs],
    );
    for (const r of rows) this.limits.delete(r.account_id);
    await this.evaluate(rows.map((r) => r.account_id));
  }

  /**
   * Counters of these accounts moved (a batch of events was stored). Decided at once, unless the
   * account was decided less than USAGE_DECISION_INTERVAL_MS ago: then once more at the end of that
   * interval (one decision covers every batch in between). An account whose limits are all
   * unlimited is not decided at all (it can never be blocked by its usage; a block it holds is lifted
   * when its limits change or by the sweep). A decision reads the month's counters: a few statements
   * that, per batch, would cost the write path more than the batch itself (docs/usage.md).
   */
  async usageAdded(accountIds: string[]): Promise<void> {
    const now = Date.now();
    const due: string[] = [];
    for (const accountId of new Set(accountIds)) {
      const limits = await this.limitsOf(accountId).catch(() => undefined);
      if (limits === null || (limits && isUnlimited(limits))) continue;
      const last = this.decidedAt.get(accountId);
      if (last === undefined || now - last >= USAGE_DECISION_INTERVAL_MS) {
        this.decidedAt.set(accountId, now);
        due.push(accountId);
      } else if (!this.later.has(accountId)) {
        const timer = setTimeout(
          () => {
            this.later.delete(accountId);
            this.decidedAt.set(accountId, Date.now());
            this.track(this.evaluate([accountId]));
          },
          last + USAGE_DECISION_INTERVAL_MS - now,
        );
        timer.unref();
        this.later.set(accountId, timer);
      }
    }
    if (this.decidedAt.size > 100_000) this.decidedAt.clear();
    if (due.length > 0) await this.evaluate(due);
  }

  /** Resolves when every decision scheduled by usageAdded has been made (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.later.size > 0 || this.running.size > 0) {
      const pending = [...this.later.keys()];
      for (const accountId of pending) {
        clearTimeout(this.later.get(accountId));
        this.later.delete(accountId);
        this.track(this.evaluate([accountId]));
      }
      await Promise.all([...this.running]);
    }
  }

  private track(p: Promise<void>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Decides the blocks of these accounts now; publishes those that changed. Never throws (a failure is logged; the sweep retries blocked accounts). */
  async evaluate(accountIds: string[]): Promise<void> {
    for (const accountId of new Set(accountIds)) {
      const previous = this.deciding.get(accountId) ?? Promise.resolve();
      const next = previous
        .then(() => this.evaluateOne(accountId))
        .catch((err: Error) => {
          this.logger.warn({ account_id: accountId, err: err.message }, 'deciding usage blocks failed');
        });
      this.deciding.set(accountId, next);
      await next;
      if (this.deciding.get(accountId) === next) this.deciding.delete(accountId);
    }
  }

  private async evaluateOne(accountId: string): Promise<void> {
    const limits = await this.limitsOf(accountId);
    if (!limits) return;
    const month = monthNow();
    const totals = await this.totals(accountId, month);
    const decided = decideBlocks(limits, totals);
    const next: Stored = { month, ...decided };
    const stored: Stored[] = await this.ds.query(`SELECT month, features, kbs FROM reporting.account_blocks WHERE account_id = $1`, [
      accountId,
    ]);
    const before = stored[0];
    const changed =
      !before ||
      before.month !== month ||
      JSON.stringify(before.features) !== JSON.stringify(next.features) ||
      JSON.stringify(before.kbs) !== JSON.stringify(next.kbs);
    if (!changed) {
      await this.ds.query(`UPDATE reporting.account_blocks SET updated_at = now() WHERE account_id = $1`, [accountId]);
      return;
    }
    // Nothing to record for an account that never was blocked and is not now.
    if (!before && next.features.length === 0 && Object.keys(next.kbs).length === 0) return;
    await this.ds.query(
      `INSERT INTO reporting.account_blocks (account_id, month, features, kbs, updated_at) VALUES ($1, $2, $3::jsonb, $4::jsonb, now())
       ON CONFLICT (account_id) DO UPDATE SET month = EXCLUDED.month, features = EXCLUDED.features, kbs = EXCLUDED.kbs, updated_at = now()`,
      [accountId, month, JSON.stringify(next.features), JSON.stringify(next.kbs)],
    );
    await this.bus.publish(ReportingSubjects.blockingChanged, this.dto(accountId, next));
  }

  private dto(accountId: string, s: Stored): AccountBlockingDto {
    const blocked = s.features.length > 0 || Object.keys(s.kbs).length > 0;
    return { account_id: accountId, month: s.month, features: s.features, kbs: s.kbs, blocking_state: blocked ? 'quota' : 'unblocked' };
  }

  private async limitsOf(accountId: string): Promise<EffectiveLimits | null> {
    const cached = this.limits.get(accountId);
    if (cached && Date.now() - cached.at < this.options.limitsCacheMs) return cached.limits;
    const generation = this.limitsGeneration.get(accountId);
    const quota = await this.bus.request(AccountsSubjects.accountQuota, { account_id: accountId });
    const current = this.limitsGeneration.get(accountId) === generation;
    if (!quota.found) {
      if (current) this.limits.delete(accountId);
      return null;
    }
    if (current) this.limits.set(accountId, { limits: quota.limits, at: Date.now() });
    return quota.limits;
  }

  /** This month's counters of the account (its rollup: the sums over its KBs), and what each of its KBs holds (all time). */
  private async totals(accountId: string, month: string): Promise<UsageTotals> {
    const monthly: { metric: string; value: number }[] = await this.ds.query(
      `SELECT metric, sum(value)::float8 AS value FROM reporting.usage_hourly_accounts WHERE account_id = $1 AND hour >= $2 GROUP BY metric`,
      [accountId, monthStart(month)],
    );
    const stored: { kbid: string; metric: string; value: number }[] = await this.ds.query(
      `SELECT kbid, metric, sum(value)::float8 AS value FROM reporting.usage_hourly
        WHERE kbid IN (SELECT kbid FROM reporting.kb_accounts WHERE account_id = $1) AND metric IN ('resources', 'storage_bytes') GROUP BY kbid, metric`,
      [accountId],
    );
    const perKb: UsageTotals['perKb'] = {};
    for (const r of stored) (perKb[r.kbid] ??= {})[r.metric] = Number(r.value);
    return { monthly: Object.fromEntries(monthly.map((r) => [r.metric, Number(r.value)])), perKb };
  }
}
