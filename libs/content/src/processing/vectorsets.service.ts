import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes, type SemanticModelsChangedEvent } from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { AuditBatchService } from '../audit/audit-batch.service';
import { FieldsService } from '../resources/fields.service';

/**
 * Follows a KB's semantic models (decision 0008). A model added to a KB is computed for the content
 * already there by processing every resource again (processing vectorises with each of the KB's
 * models); a removed model's vectors leave the index and the stored extracted data.
 */
@Injectable()
export class VectorsetsService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly fields: FieldsService,
    private readonly audit: AuditBatchService,
  ) {}

  async onChanged(event: SemanticModelsChangedEvent): Promise<void> {
    if (event.removed_vectorset) await this.drop(event.kb_id, event.removed_vectorset);
    if (event.added) await this.reprocessKb(event.kb_id, event.added);
  }

  private async drop(kbid: string, vectorset: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`DELETE FROM content.search_vectors WHERE kbid = $1 AND vectorset = $2`, [kbid, vectorset]);
      // Only vectors change: a new index generation (decision 0014; paragraph writes get theirs from a trigger).
      await m.query(`UPDATE content.search_stats SET generation = nextval('content.search_generation') WHERE kbid = $1`, [kbid]);
      await m.query(
        `UPDATE content.fields SET extracted = extracted #- ARRAY['vectorsets', $2]::text[]
          WHERE kbid = $1 AND extracted IS NOT NULL AND extracted->'vectorsets' ? $2`,
        [kbid, vectorset],
      );
    });
  }

  /** Resources in id order, a page at a time; a resource deleted meanwhile is skipped. Redelivery only repeats work. */
  private async reprocessKb(kbid: string, model: string): Promise<void> {
    let after = '00000000-0000-0000-0000-000000000000';
    let count = 0;
    const started = Date.now();
    this.task(kbid, 'started', model, started);
    for (;;) {
      const page = (await this.ds.query(
        `SELECT id::text AS id FROM content.resources WHERE kbid = $1 AND id > $2::uuid ORDER BY id LIMIT 200`,
        [kbid, after],
      )) as { id: string }[];
      for (const { id } of page) {
        try {
          await this.fields.reprocess({ kbid, rid: id, actor: { user: 'system', client_type: 'processing', user_type: 'nuakey' } });
          count += 1;
        } catch (err) {
          if (!(err instanceof DomainError && err.code === ErrorCodes.RESOURCE_NOT_FOUND)) throw err;
        }
      }
      if (page.length < 200) break;
      after = (page[page.length - 1] as { id: string }).id;
    }
    this.task(kbid, 'stopped', model, started, count);
    this.logger.info({ kbid, model, resources: count }, 'semantic model added: the knowledge box is being vectorised with it');
  }

  /**
   * `started` / `stopped` activity events: in the reference these belong to KB tasks (background
   * jobs run over a whole KB, such as a semantic model migration). Here the one such task is this
   * one; `stopped` says how many resources were sent to processing again. A redelivered task
   * starts again and says so.
   */
  private task(kbid: string, type: 'started' | 'stopped', model: string, started: number, resources?: number): void {
    this.audit.record({
      event_id: randomUUID(),
      kbid,
      type,
      date: new Date().toISOString(),
      user_type: 'nuakey',
      client_type: 'processing',
      ...(type === 'stopped' ? { total_duration: Date.now() - started } : {}),
      audit_metadata: { task: 'semantic-model-migration', model, ...(resources !== undefined ? { resources } : {}) },
    });
  }
}
