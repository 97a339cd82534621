import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { KbEvent } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { OutboxService } from '../outbox/outbox.service';
import { SearchIndexerService } from '../search/index/search-indexer.service';

export const kbBlobPrefix = (kbid: string) => `content/kbs/${kbid}/`;

/** Removes everything content holds for a deleted KB: rows, then (through the outbox) its blobs. */
@Injectable()
export class KbCleanupService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: OutboxService,
    private readonly indexer: SearchIndexerService,
  ) {}

  async onKbDeleted(event: KbEvent): Promise<void> {
    const rows = await this.ds.transaction(async (m) => {
      await this.indexer.dropKb(m, event.kb_id);
      await m.query(`DELETE FROM content.resources WHERE kbid = $1`, [event.kb_id]);
      await m.query(`DELETE FROM content.kb_synonyms WHERE kbid = $1`, [event.kb_id]);
      await m.query(`DELETE FROM content.entities_groups WHERE kbid = $1`, [event.kb_id]);
      await m.query(`DELETE FROM content.kb_configs WHERE kbid = $1`, [event.kb_id]);
      await m.query(`DELETE FROM content.labelsets WHERE kbid = $1`, [event.kb_id]);
      // A deleted KB's processing webhooks are not sent any more (their attempts go with them).
      await m.query(`DELETE FROM content.webhook_deliveries WHERE kbid = $1`, [event.kb_id]);
      // Export and import jobs go with the KB (export files are under its blob prefix); its
      // account's backups stay, to be restored or deleted by the account.
      await m.query(`DELETE FROM content.kb_transfers WHERE kbid = $1 AND kind <> 'backup'`, [event.kb_id]);
      return this.outbox.add(m, [{ kind: 'blob_cleanup', target: kbBlobPrefix(event.kb_id) }]);
    });
    await this.outbox.relay(rows);
  }
}
