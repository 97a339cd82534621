import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { KbEvent } from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { REPORTING_DATA_SOURCE } from './reporting.tokens';
import { linkKbs, lockSealing, moveKbOutOfAccount } from './usage/usage-accounts';
import { UsageService } from './usage/usage.service';

/** Counters of what an account did (they stay the account's); `resources` and `storage_bytes` are what the KB held, gone with it. */
const HELD_METRICS = ['resources', 'storage_bytes'];

/**
 * A deleted KB's reporting data goes with it (accounts' `kbDeleted`, as content's cleanup): its
 * activity log and feedback, its hash chains, its REMi scores, its downloads (rows and files), its
 * hourly usage rows and its account link. Its usage counters are first added to the account's own
 * rows (kbid = the account id): the account's past usage, its monthly limits and Get Usage of the
 * account do not change when a KB is deleted — deleting a KB must not hand back a month's quota.
 * The account's rollup (`usage_hourly_accounts`) loses what the KB held, and nothing else.
 * The KB is remembered (`reporting.deleted_kbs`) so an event still in the bus is not stored again.
 * One transaction, under the sealer's lock, so a redelivered `kbDeleted` finds nothing left and
 * counts nothing twice; the download files are deleted after it (a crash in between: the event
 * comes again, and they go then).
 */
@Injectable()
export class KbCleanupService {
  constructor(
    @Inject(REPORTING_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly usage: UsageService,
  ) {}

  async onKbDeleted(event: KbEvent): Promise<void> {
    const kbid = event.kb_id;
    const account = event.account_id;
    await this.ds.transaction(async (m) => {
      // No batch sealed meanwhile: one sealed before counted in the KB's rows (moved below), one after finds its records gone.
      await lockSealing(m);
      await m.query(`INSERT INTO reporting.deleted_kbs (kbid, account_id) VALUES ($1, $2) ON CONFLICT (kbid) DO NOTHING`, [kbid, account]);
      // The account's own rows, listed under the account like a KB of it.
      await linkKbs(m, [{ kbid: account, account_id: account }]);
      // The account's rollup follows (what the KB held leaves it), before the KB's rows and link go.
      await moveKbOutOfAccount(m, kbid, account, HELD_METRICS);
      await m.query(
        `INSERT INTO reporting.usage_hourly AS u (kbid, hour, metric, value)
         SELECT $2::uuid, hour, metric, value FROM reporting.usage_hourly WHERE kbid = $1 AND metric <> ALL($3::text[]) AND value <> 0
         ON CONFLICT (kbid, hour, metric) DO UPDATE SET value = u.value + EXCLUDED.value`,
        [kbid, account, HELD_METRICS],
      );
      await m.query(
        `INSERT INTO reporting.usage_hourly_keys AS u (nua_key_id, kbid, hour, metric, value)
         SELECT nua_key_id, $2::uuid, hour, metric, value FROM reporting.usage_hourly_keys WHERE kbid = $1 AND metric <> ALL($3::text[]) AND value <> 0
         ON CONFLICT (nua_key_id, kbid, hour, metric) DO UPDATE SET value = u.value + EXCLUDED.value`,
        [kbid, account, HELD_METRICS],
      );
      for (const table of [
        'usage_hourly',
        'usage_hourly_keys',
        'remi_scores',
        'activity_events',
        'activity_months',
        'chat_feedback',
        'activity_chain_heads',
        'activity_downloads',
        'kb_accounts',
      ]) {
        await m.query(`DELETE FROM reporting.${table} WHERE kbid = $1`, [kbid]);
      }
    });
    this.usage.forgetKb(kbid);
    const files = await this.blobs.deletePrefix(`reporting/kbs/${kbid}/`);
    this.logger.info({ kbid, files }, 'reporting data of a deleted KB deleted');
  }
}
