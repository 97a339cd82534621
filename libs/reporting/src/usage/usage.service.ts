import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  UsageMetrics,
  type AuditRecordedEvent,
  type GetUsageRequest,
  type UsageBucketDto,
  type UsageMetric,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { REPORTING_DATA_SOURCE } from '../reporting.tokens';
import { linkKbs, lockSealing } from './usage-accounts';
import { bucketStarts, MAX_USAGE_BUCKETS } from './usage-buckets';
import { hourOf, usageDeltas } from './usage-metrics';

export interface UsageRow {
  kbid: string;
  hour: string;
  metric: UsageMetric;
  value: number;
}

/** A row of an understanding-API key's usage (`reporting.usage_hourly_keys`). */
export interface KeyUsageRow extends UsageRow {
  nua_key_id: string;
}

/**
 * The bucket of an hourly row and the statement's parameters after the first `n`. Rows are whole
 * hours already, so hourly buckets group on the column itself (truncating each of a year's ~100 k
 * rows cost more than summing them); other aggregations (`day` … `millennium`, checked by the request
 * DTO) truncate in UTC, the aggregation a parameter of its own.
 */
function bucketOf(aggregation: string, n: number): { bucket: string; params: string[] } {
  if (aggregation === 'hour') return { bucket: 'hour', params: [] };
  return { bucket: `date_trunc($${n + 1}, hour AT TIME ZONE 'UTC')`, params: [aggregation] };
}

/** KB → account pairs kept in memory (a KB never changes account); beyond this many, the table answers. */
const KB_CACHE_MAX = 100_000;
/** A KB the accounts service did not know (deleted) is not asked about again for this long. */
const UNKNOWN_KB_MS = 60_000;

/**
 * Usage counters (issue 19): each stored activity event adds its deltas (see usageDeltas) to the
 * hourly row of its KB and metric, in the transaction that seals the event, so an event counts
 * exactly once. Counting needs nothing but the event (not the KB's account: an outage of the
 * accounts service never holds events back). The same transaction adds them to the account's
 * hourly rows when the KB's account is known; a KB whose account is learnt later has its counters
 * added then (rememberKb). Get Usage sums a KB's rows, or account-wide the account's, into buckets.
 */
@Injectable()
export class UsageService {
  private readonly kbAccounts = new Map<string, string>();
  private readonly unknownKbs = new Map<string, number>();

  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * A KB's account, learnt (accounts' `kbCreated`, or asked): the KB is linked to it, and what it
   * counted before (events sealed before its account was known) is added to the account's rollup
   * — once, in the transaction that links it, with no batch being sealed meanwhile (usage-accounts.ts).
   */
  async rememberKb(kbid: string, accountId: string): Promise<void> {
    if (this.kbAccounts.has(kbid)) return;
    await this.ds.transaction(async (m) => {
      await lockSealing(m);
      await linkKbs(m, [{ kbid, account_id: accountId }]);
    });
    this.cache(kbid, accountId);
  }

  /**
   * The accounts of these KBs: memory, then the table, then the accounts service (remembered).
   * KBs nobody knows, or that could not be asked about now, are left out.
   */
  async accountsOf(kbids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const now = Date.now();
    const missing = [...new Set(kbids)].filter((k) => {
      const a = this.kbAccounts.get(k);
      if (a) out.set(k, a);
      return !a && !((this.unknownKbs.get(k) ?? 0) > now);
    });
    if (missing.length === 0) return out;
    const rows: { kbid: string; account_id: string }[] = await this.ds.query(
      `SELECT kbid, account_id FROM reporting.kb_accounts WHERE kbid = ANY($1::uuid[])`,
      [missing],
    );
    for (const r of rows) {
      out.set(r.kbid, r.account_id);
      this.cache(r.kbid, r.account_id);
    }
    for (const kbid of missing.filter((k) => !out.has(k))) {
      try {
        const { account_id } = await this.bus.request(AccountsSubjects.kbAccount, { kb_id: kbid });
        if (!account_id) {
          if (this.unknownKbs.size >= KB_CACHE_MAX) this.unknownKbs.clear();
          this.unknownKbs.set(kbid, now + UNKNOWN_KB_MS);
          continue;
        }
        await this.rememberKb(kbid, account_id);
        out.set(kbid, account_id);
      } catch (err) {
        this.logger.warn({ kbid, err: (err as Error).message }, 'the account of a KB could not be learnt now');
      }
    }
    return out;
  }

  /** Rows to add for these newly sealed events, summed per KB, hour and metric. */
  rowsOf(events: AuditRecordedEvent[]): UsageRow[] {
    const sums = new Map<string, UsageRow>();
    for (const e of events) {
      const hour = hourOf(e.date);
      for (const [metric, value] of Object.entries(usageDeltas(e)) as [UsageMetric, number][]) {
        const key = `${e.kbid}/${hour}/${metric}`;
        const row = sums.get(key);
        if (row) row.value += value;
        else sums.set(key, { kbid: e.kbid, hour, metric, value });
      }
    }
    return [...sums.values()];
  }

  /** Rows to add per understanding-API key, for the events a key caused (`details.nua_key_id`, set by the audit store). */
  keyRowsOf(events: AuditRecordedEvent[]): KeyUsageRow[] {
    const sums = new Map<string, KeyUsageRow>();
    for (const e of events) {
      const key = e.details?.['nua_key_id'];
      if (typeof key !== 'string') continue;
      const hour = hourOf(e.date);
      for (const [metric, value] of Object.entries(usageDeltas(e)) as [UsageMetric, number][]) {
        const id = `${key}/${e.kbid}/${hour}/${metric}`;
        const row = sums.get(id);
        if (row) row.value += value;
        else sums.set(id, { nua_key_id: key, kbid: e.kbid, hour, metric, value });
      }
    }
    return [...sums.values()];
  }

  async get(req: GetUsageRequest): Promise<UsageBucketDto[]> {
    const from = new Date(req.from);
    const to = new Date(req.to);
    if (Number.isNaN(from.getTime()))
      throw DomainError.validation([{ loc: ['query', 'from'], msg: 'Input should be a valid datetime', type: 'datetime_parsing' }]);
    if (Number.isNaN(to.getTime()))
      throw DomainError.validation([{ loc: ['query', 'to'], msg: 'Input should be a valid datetime', type: 'datetime_parsing' }]);
    if (to <= from) throw DomainError.validation([{ loc: ['query', 'to'], msg: '`to` must be after `from`', type: 'value_error' }]);
    const starts = bucketStarts(from, to, req.aggregation);
    if (!starts) {
      throw DomainError.validation([
        {
          loc: ['query', 'aggregation'],
          msg: `At most ${MAX_USAGE_BUCKETS} buckets per request: use a coarser aggregation or a shorter range`,
          type: 'value_error',
        },
      ]);
    }
    if (req.kb_id) {
      const owner = (await this.accountsOf([req.kb_id])).get(req.kb_id);
      if (owner !== req.account_id) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found in this account');
    }
    // Whole buckets: from the start of the one holding `from` (hourly rows are whole hours).
    const sums = await this.sums(req, (starts[0] ?? from).toISOString(), to.toISOString());
    // [bucket start (epoch s), metric index from 1, sum, …]
    const flat = JSON.parse(`[${sums ?? ''}]`) as number[];
    const byBucket = new Map<number, number[]>();
    for (let i = 0; i + 2 < flat.length; i += 3) {
      const t = (flat[i] as number) * 1000;
      let values = byBucket.get(t);
      if (!values) byBucket.set(t, (values = new Array<number>(UsageMetrics.length).fill(0)));
      values[(flat[i + 1] as number) - 1] = flat[i + 2] as number;
    }
    return starts.map((s) => {
      const values = byBucket.get(s.getTime());
      return {
        timestamp: s.toISOString(),
        metrics: UsageMetrics.map((name, i) => ({ name, value: values ? (values[i] as number) : 0, details: [] })),
      };
    });
  }

  /**
   * The non-zero sums of the range as one text, `<bucket start, epoch s>,<metric index from 1>,<sum>`
   * comma-separated (the inside of a JSON array of numbers): a year of hourly buckets is up to
   * 8 784 × 11 = 96 624 sums, and as rows (or built JSON) they cost more than the query itself
   * (docs/benchmarks.md, "Reporting"). A KB's rows, or account-wide its account's rollup
   * (`usage_hourly_accounts`: the sums over its KBs, kept as they count), are one per hour and
   * metric already: hourly buckets are those rows as stored, no grouping.
   */
  private async sums(req: GetUsageRequest, from: string, to: string): Promise<string | null> {
    // A double prints as JSON reads it (shortest exact digits; never NaN or Infinity: sums of finite deltas).
    const item = (bucket: string, metric: string, value: string) =>
      `${bucket}::bigint || ',' || array_position($3::text[], ${metric}) || ',' || ${value}`;
    if (req.nua_key_id) return this.keySums(req, from, to, item);
    const rowsOf = req.kb_id ? `reporting.usage_hourly WHERE kbid = $4` : `reporting.usage_hourly_accounts WHERE account_id = $4`;
    if (req.aggregation === 'hour') {
      const rows: { s: string | null }[] = await this.ds.query(
        `SELECT string_agg(${item('extract(epoch FROM hour)', 'metric', 'value')}, ',') AS s
           FROM ${rowsOf} AND hour >= $1 AND hour < $2 AND value <> 0`,
        [from, to, UsageMetrics, req.kb_id ?? req.account_id],
      );
      return rows[0]?.s ?? null;
    }
    const { bucket, params } = bucketOf(req.aggregation, 4);
    const rows: { s: string | null }[] = await this.ds.query(
      `SELECT string_agg(${item('extract(epoch FROM b)', 'metric', 'v')}, ',') AS s
         FROM (SELECT ${bucket} AS b, metric, sum(value) AS v
                 FROM ${rowsOf} AND hour >= $1 AND hour < $2 AND value <> 0
                GROUP BY 1, 2) s`,
      [from, to, UsageMetrics, req.kb_id ?? req.account_id, ...params],
    );
    return rows[0]?.s ?? null;
  }

  /** As `sums`, over what one understanding-API key caused in the account's KBs (or in one of them). */
  private async keySums(
    req: GetUsageRequest,
    from: string,
    to: string,
    item: (bucket: string, metric: string, value: string) => string,
  ): Promise<string | null> {
    const kbs = req.kb_id ? `kbid = $4` : `kbid IN (SELECT kbid FROM reporting.kb_accounts WHERE account_id = $4)`;
    const { bucket, params } = bucketOf(req.aggregation, 5);
    const rows: { s: string | null }[] = await this.ds.query(
      `SELECT string_agg(${item('extract(epoch FROM b)', 'metric', 'v')}, ',') AS s
         FROM (SELECT ${bucket} AS b, metric, sum(value) AS v
                 FROM reporting.usage_hourly_keys WHERE nua_key_id = $5 AND ${kbs} AND hour >= $1 AND hour < $2 AND value <> 0
                GROUP BY 1, 2) s`,
      [from, to, UsageMetrics, req.kb_id ?? req.account_id, req.nua_key_id, ...params],
    );
    return rows[0]?.s ?? null;
  }

  /** A deleted KB: no longer an account's (Get Usage of it is 404 from now on). */
  forgetKb(kbid: string): void {
    this.kbAccounts.delete(kbid);
  }

  private cache(kbid: string, accountId: string): void {
    if (this.kbAccounts.size >= KB_CACHE_MAX) this.kbAccounts.clear();
    this.kbAccounts.set(kbid, accountId);
  }
}
