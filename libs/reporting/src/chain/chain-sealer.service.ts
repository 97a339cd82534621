import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { AuditRecordedEvent } from '@kb/contracts';
import { REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { BlockingService } from '../usage/blocking.service';
import { addToAccounts, linkKbs, SEALER_LOCK } from '../usage/usage-accounts';
import { UsageService } from '../usage/usage.service';
import { chainHash, GENESIS_HASH } from './chain-hash';
import { CHAIN_COLUMNS, type StoredChainRow } from './chain-rows';

/** Records sealed per transaction. */
const BATCH = 1000;

/**
 * Seals the activity log into hash chains (docs/activity.md, "Tamper evidence"): every stored
 * record gets the next position of its (KB, event type) chain and the hash of that position, which
 * covers the previous record's hash and every member the record was stored with. Records are
 * sealed in the background, in the order they committed (not their id order: ids are taken before
 * commit), a batch per transaction under an advisory lock, so that of several reporting processes
 * one seals at a time and a chain never forks. An idle turn is one indexed read.
 *
 * Sealing is also when usage is metered (issue 19): a record is sealed exactly once, and its usage
 * is added to the hourly counters in the same transaction, so every stored event counts once (a
 * redelivered one is never stored twice) — a second's batch of up to BATCH events in one upsert,
 * instead of an upsert per insert batch on the write path (docs/benchmarks.md, docs/usage.md).
 */
@Injectable()
export class ChainSealerService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ChainSealer');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
    private readonly usage: UsageService,
    private readonly blocking: BlockingService,
  ) {}

  onModuleInit(): void {
    if (this.options.chainSealMs > 0) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay = this.options.chainSealMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.seal()
        .then((full) => this.schedule(full ? 0 : undefined))
        .catch((err: unknown) => {
          this.logger.warn(`sealing the activity log failed: ${(err as Error).message}`);
          this.schedule();
        });
    }, delay);
    this.timer.unref();
  }

  /** Seals one batch and meters its usage; true when it was full (more may be waiting). */
  async seal(): Promise<boolean> {
    const [probe] = (await this.ds.query(`SELECT EXISTS (SELECT 1 FROM reporting.activity_events WHERE chain_seq IS NULL) AS pending`)) as {
      pending: boolean;
    }[];
    if (!probe?.pending) return false;
    let metered: string[] = [];
    const full = await this.ds.transaction(async (m) => {
      const [lock] = (await m.query(`SELECT pg_try_advisory_xact_lock($1) AS ok`, [SEALER_LOCK])) as { ok: boolean }[];
      if (!lock?.ok) return false;
      const rows: StoredChainRow[] = await m.query(
        `SELECT ${CHAIN_COLUMNS} FROM reporting.activity_events e WHERE e.chain_seq IS NULL ORDER BY e.id LIMIT ${BATCH}`,
      );
      if (rows.length === 0) return false;
      const heads = await this.heads(m, rows);
      const sealed: { id: string; date: string; seq: number; hash: string }[] = [];
      for (const row of rows) {
        const key = `${row.kbid}/${row.type}`;
        const head = heads.get(key) ?? { seq: 0, hash: GENESIS_HASH };
        const seq = head.seq + 1;
        const hash = chainHash(head.hash, seq, row);
        heads.set(key, { seq, hash });
        sealed.push({ id: row.id, date: new Date(row.date).toISOString(), seq, hash });
      }
      await m.query(
        `UPDATE reporting.activity_events e SET chain_seq = u.seq, chain_hash = u.hash
           FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::text[]) AS u(id, date, seq, hash)
          WHERE e.id = u.id AND e.date = u.date AND e.chain_seq IS NULL`,
        [sealed.map((s) => s.id), sealed.map((s) => s.date), sealed.map((s) => s.seq), sealed.map((s) => s.hash)],
      );
      // Calls of understanding-API keys name no KB: their rows are the account's own (kbid = the account id, as a
      // deleted KB's counters are), linked to the account before they count.
      const accountRows = [...new Set(rows.filter(isAccountScoped).map((r) => r.kbid))];
      await linkKbs(
        m,
        accountRows.map((a) => ({ kbid: a, account_id: a })),
      );
      const deltas = this.usage.rowsOf(rows.map(asEvent));
      if (deltas.length > 0) {
        await m.query(
          `INSERT INTO reporting.usage_hourly AS u (kbid, hour, metric, value)
           SELECT kbid, hour, metric, value FROM jsonb_to_recordset($1::jsonb) AS t(kbid uuid, hour timestamptz, metric text, value double precision)
           ORDER BY kbid, hour, metric
           ON CONFLICT (kbid, hour, metric) DO UPDATE SET value = u.value + EXCLUDED.value`,
          [JSON.stringify(deltas)],
        );
        // And to their accounts' rollup, for the KBs whose account is known (the others' when it is learnt: linkKbs).
        await addToAccounts(m, deltas);
      }
      // What understanding-API keys caused, per key as well: in this transaction, so exactly once too.
      const keyed = this.usage.keyRowsOf(rows.map(asEvent));
      if (keyed.length > 0) {
        await m.query(
          `INSERT INTO reporting.usage_hourly_keys AS u (nua_key_id, kbid, hour, metric, value)
           SELECT nua_key_id, kbid, hour, metric, value
             FROM jsonb_to_recordset($1::jsonb) AS t(nua_key_id uuid, kbid uuid, hour timestamptz, metric text, value double precision)
           ORDER BY nua_key_id, kbid, hour, metric
           ON CONFLICT (nua_key_id, kbid, hour, metric) DO UPDATE SET value = u.value + EXCLUDED.value`,
          [JSON.stringify(keyed)],
        );
      }
      metered = [...new Set(deltas.map((d) => d.kbid))];
      const ends = [...heads.entries()].map(([key, h]) => ({
        kbid: key.slice(0, key.indexOf('/')),
        type: key.slice(key.indexOf('/') + 1),
        ...h,
      }));
      await m.query(
        `INSERT INTO reporting.activity_chain_heads AS h (kbid, type, seq, hash)
         SELECT kbid, type, seq, hash FROM jsonb_to_recordset($1::jsonb) AS t(kbid uuid, type text, seq bigint, hash text)
         ON CONFLICT (kbid, type) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash`,
        [JSON.stringify(ends)],
      );
      return rows.length === BATCH;
    });
    // Blocks follow the counters, for the accounts of the KBs counted (best effort: the usage is counted already).
    if (metered.length > 0) {
      const accounts = await this.usage.accountsOf(metered).catch(() => new Map<string, string>());
      await this.blocking.usageAdded([...accounts.values()]);
    }
    return full;
  }

  /** Seals and meters everything stored so far (tests; the timer does it every `chainSealMs`). */
  async sealAll(): Promise<void> {
    while (await this.seal()) {
      // a full batch: more may be waiting
    }
  }

  private async heads(m: EntityManager, rows: StoredChainRow[]): Promise<Map<string, { seq: number; hash: string }>> {
    const pairs = [...new Set(rows.map((r) => `${r.kbid}/${r.type}`))].map((k) => ({
      kbid: k.slice(0, k.indexOf('/')),
      type: k.slice(k.indexOf('/') + 1),
    }));
    const found: { kbid: string; type: string; seq: string; hash: string }[] = await m.query(
      `SELECT h.kbid::text AS kbid, h.type, h.seq, h.hash FROM reporting.activity_chain_heads h
         JOIN jsonb_to_recordset($1::jsonb) AS t(kbid uuid, type text) ON h.kbid = t.kbid AND h.type = t.type FOR UPDATE OF h`,
      [JSON.stringify(pairs)],
    );
    return new Map(found.map((h) => [`${h.kbid}/${h.type}`, { seq: Number(h.seq), hash: h.hash }]));
  }
}

/** A predict call of an understanding-API key: stored under its account's id (docs/usage.md). */
function isAccountScoped(row: StoredChainRow): boolean {
  const details = (row.details ?? {}) as Record<string, unknown>;
  return row.type === 'predict' && details['scope'] === 'account' && details['account_id'] === row.kbid;
}

/** A stored record as the event it was (what usage metering reads of it). */
function asEvent(row: StoredChainRow): AuditRecordedEvent {
  return {
    event_id: row.event_id,
    kbid: row.kbid,
    type: row.type as AuditRecordedEvent['type'],
    date: new Date(row.date).toISOString(),
    ...(typeof row.total_duration === 'number' ? { total_duration: row.total_duration } : {}),
    audit_metadata: (row.audit_metadata ?? {}) as Record<string, unknown>,
    details: (row.details ?? {}) as Record<string, unknown>,
  };
}
