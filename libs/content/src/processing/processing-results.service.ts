import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  ContentSubjects,
  extractedBlobKey,
  fieldBlobPrefix,
  type ExtractedFieldData,
  type FieldError,
  type FieldProcessedResult,
} from '@kb/contracts';
import { Coalescer } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import type { OutboxRow } from '@kb/platform/outbox';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { FieldEntity } from '../entities/field.entity';
import { OutboxService, type OutboxEntry } from '../outbox/outbox.service';
import { QuestionAnswersService } from './question-answers.service';
import { deriveResourceStatus } from '../resources/resource-status';
import { resourceSummaryPatch } from '../resources/resource-summary';
import { ResourcesRepository } from '../resources/resources.repository';
import { extractedOf, loadExtractedBlob, type LoadedResult } from './extracted-result';
import { releaseUnstored } from '../resources/unstored-files';
import { byteMap, heldBlobs, heldBytes, MAX_RESULT_ARTEFACTS } from '../resources/held-bytes';
import { IndexBatch, SearchIndexerService } from '../search/index/search-indexer.service';
import { WebhookDeliveriesService, type CompletedJob } from './webhook-deliveries.service';
import { KbNotifier } from '../notifications/kb-notifier.service';

/** The most results applied in one transaction (a batch holds their rows and locks until it commits). */
export const RESULTS_PER_TRANSACTION = 16;

interface PendingResult {
  result: FieldProcessedResult;
  loaded: Exclude<LoadedResult, { gone: true }>;
  followUps: OutboxEntry[];
}

interface StoredResult {
  /** Outbox rows written already (a webhook delivery's). */
  rows: OutboxRow[];
  /** Outbox entries to write with the batch's other results'. */
  entries: OutboxEntry[];
  /** The resource, when the result was applied. */
  notified?: { id: string; title: string };
}

/** Results in (kbid, rid) order: the order in which a batch locks their resources. */
function compareResults(a: FieldProcessedResult, b: FieldProcessedResult): number {
  return a.kbid < b.kbid ? -1 : a.kbid > b.kbid ? 1 : a.rid < b.rid ? -1 : a.rid > b.rid ? 1 : 0;
}

@Injectable()
export class ProcessingResultsService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly repo: ResourcesRepository,
    private readonly outbox: OutboxService,
    private readonly indexer: SearchIndexerService,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly webhooks: WebhookDeliveriesService,
    private readonly questionAnswers: QuestionAnswersService,
    private readonly notifier: KbNotifier,
  ) {}

  /**
   * Idempotent: a result for a write older than the field's current one, for a deleted field or
   * resource, or delivered twice, changes nothing the second time. The extracted data is read
   * from the blob the worker wrote before the transaction, so no row lock waits on the store.
   */
  async apply(result: FieldProcessedResult): Promise<void> {
    const loaded: LoadedResult = result.error ? { error: result.error } : await loadExtractedBlob(this.blobs, result);
    if ('gone' in loaded) return;
    // Question/answer pairs follow a successful result when the KB has a generative provider.
    const followUps =
      'extracted' in loaded
        ? await this.questionAnswers.jobFor({
            kbid: result.kbid,
            rid: result.rid,
            field_type: result.field_type,
            field_id: result.field_id,
            seqid: result.seqid,
          })
        : [];
    const applied = await this.batches.submit({ result, loaded, followUps });
    if (applied && 'extracted' in loaded) await this.pruneOlderResults(result);
  }

  /**
   * Results waiting while a batch's transaction runs go together in the next one (group commit,
   * at most RESULTS_PER_TRANSACTION): a lone result runs at once, and under load N results share
   * one transaction, one outbox insert and one index statement. A batch that fails is run again
   * one result per transaction, so a bad result fails only its own delivery.
   */
  private readonly batches = new Coalescer<PendingResult, boolean>((items) => this.storeBatch(items), RESULTS_PER_TRANSACTION);

  /** Applies the results in one transaction; true for each one applied (not stale, gone or applied before). */
  private async storeBatch(items: PendingResult[]): Promise<boolean[]> {
    // Resources are locked in one order by every batch, so two batches never wait on each other in a cycle.
    const order = items.map((item, i) => ({ item, i })).sort((a, b) => compareResults(a.item.result, b.item.result) || a.i - b.i);
    const stored: StoredResult[] = [];
    const rows = await this.ds.transaction(async (m) => {
      const index = new IndexBatch();
      const direct: OutboxRow[] = [];
      const entries: OutboxEntry[] = [];
      for (const { item, i } of order) {
        const one = await this.storeOne(m, item.result, item.loaded, item.followUps, index);
        stored[i] = one;
        direct.push(...one.rows);
        entries.push(...one.entries);
      }
      await this.indexer.flush(m, index);
      return [...direct, ...(await this.outbox.add(m, entries))];
    });
    await this.outbox.relay(rows);
    items.forEach(({ result, loaded }, i) => {
      const notified = stored[i]?.notified;
      if (!notified) return;
      // The result and its index rows committed together: processed, then (with data) indexed.
      this.notifier.processed(result.kbid, notified, result.seqid, 'error' in loaded);
      if ('extracted' in loaded) this.notifier.indexed(result.kbid, notified, result.seqid);
    });
    return stored.map((s) => s.notified !== undefined);
  }

  /**
   * One result's rows inside the batch's transaction: the outbox rows written already (a webhook's)
   * and the entries still to write; `notified` when the result was applied.
   */
  private async storeOne(
    m: EntityManager,
    result: FieldProcessedResult,
    loaded: Exclude<LoadedResult, { gone: true }>,
    followUps: OutboxEntry[],
    index: IndexBatch,
  ): Promise<StoredResult> {
    const none = (rows: OutboxRow[], entries: OutboxEntry[] = []): StoredResult => ({ rows, entries });
    // The job is done whatever becomes of its result (a newer write may have superseded it).
    const completed = (await m.query(
      `WITH done AS (
         UPDATE content.processing_requests SET completed_at = now(), failed = $2, response = $3, retries = greatest(retries, $4)
          WHERE processing_id = $1 AND completed_at IS NULL
          RETURNING processing_id, kbid, rid, field_type, field_id, seqid, labels, retries, completed_at, webhook, nua_key_id
       )
       SELECT * FROM done`,
      [
        result.processing_id,
        'error' in loaded,
        'error' in loaded ? `${loaded.error.code_str}: ${loaded.error.body}` : null,
        result.retries ?? 0,
      ],
    )) as (CompletedJob & { nua_key_id?: string | null })[];
    // A pushed field's processing is metered under the key of the client that pushed it.
    const byKey = completed[0]?.nua_key_id ? { nua_key_id: completed[0].nua_key_id } : {};
    // The job was completed before: this result was applied already (delivered again after a
    // crash or a shutdown that handed it back between the commit and the ack). Applying it again
    // would count its processing twice (a second `processed` event with a new id).
    if (completed.length === 0 && (await this.knownJob(m, result.processing_id))) return none([]);
    // Its webhook is scheduled with the completion, even when the resource is gone meanwhile.
    const hook = completed[0]?.webhook ? await this.webhooks.schedule(m, completed[0], 'error' in loaded ? loaded.error : null) : [];
    const resource = await this.repo.lockById(m, result.kbid, result.rid);
    // The worker wrote its result's blob after the resource (or field) and its blobs were
    // deleted: nothing will ever read the field's results, so they go too. (A result for an
    // older write keeps its blob: it may still be the field's artefact; the newer result prunes it.)
    const orphan: OutboxEntry[] =
      'extracted' in loaded
        ? [{ kind: 'blob_cleanup', target: `${fieldBlobPrefix(result)}extracted/` }, ...unappliedArtefacts(result, {})]
        : [];
    if (!resource) return none(hook, orphan);
    const field = await this.repo.findField(resource.id, result.field_type, result.field_id, m);
    if (!field) return none(hook, orphan);
    // A result for an older write is not applied, so what it stored (its JSON, its thumbnail: keys
    // of its own write) is no artefact of the field (unless the field's record names it) and would
    // stay in the store uncounted: it goes.
    if (field.seqid > result.seqid) {
      return none(hook, 'extracted' in loaded ? unappliedArtefacts(result, Object.fromEntries(heldBlobs([field]))) : []);
    }
    const now = new Date();
    const patch: Partial<FieldEntity> = {};
    let language: string | undefined;
    if ('error' in loaded) {
      const error: FieldError = { ...loaded.error, created: now.toISOString() };
      patch.status = 'ERROR';
      patch.error = error;
      patch.errors = [...field.errors, error].slice(-20);
    } else {
      patch.status = 'PROCESSED';
      patch.error = null;
      patch.extracted = extractedOf(loaded.extracted, now.toISOString());
      // What this result stored replaces what the field's previous result stored (see
      // replacedArtefacts). The JSON's own size is the store's, read with it.
      patch.artefacts = {
        ...byteMap(result.stored_bytes, fieldBlobPrefix(result), MAX_RESULT_ARTEFACTS),
        [extractedBlobKey(result)]: loaded.bytes,
      };
      language = loaded.language;
    }
    // Processing has read the file: one sent with x-skip-store is deleted now (on success or error).
    const released = releaseUnstored(field);
    if (released) patch.value = released.value;
    await this.repo.updateField(m, field, patch);
    const current = await this.repo.fieldsOf(resource.id, m);
    const isThis = (f: FieldEntity): boolean => f.fieldType === field.fieldType && f.fieldId === field.fieldId;
    const fields = current.map((f) => (isThis(f) ? { ...f, ...patch } : f));
    // The KB's stored bytes change by what the field holds now less what it held: the new
    // result's artefacts for the previous one's, an unstored file deleted (x-skip-store).
    const bytes = heldBytes(fields) - heldBytes(current.map((f) => (isThis(f) ? field : f)));
    const metadata =
      language && !resource.metadata['language'] ? { ...resource.metadata, language, languages: [language] } : resource.metadata;
    const status = deriveResourceStatus(fields.map((f) => f.status));
    const summary = resourceSummaryPatch(resource, fields) ?? {};
    await this.repo.updateResource(m, resource.id, { status, metadata, ...summary });
    const updated = { ...resource, status, metadata, ...summary };
    if ('extracted' in loaded) await this.indexer.indexField(m, updated, field, loaded.extracted, index);
    await this.indexer.syncResource(m, updated, { batch: index });
    return {
      rows: hook,
      notified: { id: resource.id, title: updated.title },
      entries: [
        ...(released ? [released.cleanup] : []),
        ...replacedArtefacts(field, patch),
        ...followUps,
        {
          kind: 'event',
          target: ContentSubjects.auditRecorded.subject,
          payload: {
            event_id: randomUUID(),
            kbid: result.kbid,
            type: 'processed',
            date: now.toISOString(),
            resource_id: result.rid,
            user_type: 'nuakey',
            client_type: 'processing',
            ...byKey,
            audit_metadata: {
              processing_id: result.processing_id,
              field: `${result.field_type}/${result.field_id}`,
              status: patch.status,
              ...('extracted' in loaded ? { usage: usageOf(loaded.extracted) } : {}),
              ...(bytes !== 0 ? { bytes } : {}),
            },
          },
        },
        ...('extracted' in loaded
          ? [
              {
                kind: 'event' as const,
                target: ContentSubjects.auditRecorded.subject,
                payload: {
                  event_id: randomUUID(),
                  kbid: result.kbid,
                  type: 'indexed',
                  date: now.toISOString(),
                  resource_id: result.rid,
                  user_type: 'nuakey',
                  client_type: 'processing',
                  ...byKey,
                  audit_metadata: {
                    processing_id: result.processing_id,
                    field: `${result.field_type}/${result.field_id}`,
                    paragraphs: usageOf(loaded.extracted).paragraphs,
                  },
                },
              },
            ]
          : []),
      ],
    };
  }

  /** True when the job has a status record (results of jobs submitted without one, e.g. by tests, have none). */
  private async knownJob(m: EntityManager, processingId: string): Promise<boolean> {
    const rows = (await m.query(`SELECT 1 FROM content.processing_requests WHERE processing_id = $1`, [processingId])) as unknown[];
    return rows.length > 0;
  }

  /**
   * The applied result stays in the store as the field's processing artefact (it holds the
   * vectors an index rebuild needs); results of older writes are dead weight. Best effort: a
   * leftover is removed with the resource anyway.
   */
  private async pruneOlderResults(result: FieldProcessedResult): Promise<void> {
    const current = extractedBlobKey(result);
    const prefix = `${fieldBlobPrefix(result)}extracted/`;
    try {
      for await (const item of this.blobs.list(prefix)) {
        const seqid = Number(/(\d+)\.json$/.exec(item.key)?.[1] ?? NaN);
        if (item.key !== current && seqid < result.seqid) await this.blobs.delete(item.key);
      }
    } catch (err) {
      this.logger.warn({ prefix, err: (err as Error).message }, 'pruning older processing results failed');
    }
  }
}

/**
 * The blobs of the field's previous result that the applied one does not name again (an older
 * `extracted/{seqid}.json`, a thumbnail no longer made): deleted through the outbox in the
 * transaction that stops counting them, so the count and the store agree. Each key is under the
 * field's prefix (byteMap checked it when it was recorded).
 */
/**
 * The blobs a result that is not applied stored (its extracted JSON and what its `stored_bytes`
 * name under the field's prefix) that the field does not hold (`held`: its file, artefacts and
 * attachments): deleted, since nothing counts them. Keys are per write (extracted/{seqid}.json,
 * thumbnails/{seqid}), so a newer result's are never among them.
 */
function unappliedArtefacts(result: FieldProcessedResult, held: Record<string, number>): OutboxEntry[] {
  const keys = new Set([
    extractedBlobKey(result),
    ...Object.keys(byteMap(result.stored_bytes, fieldBlobPrefix(result), MAX_RESULT_ARTEFACTS)),
  ]);
  return [...keys].filter((key) => !(key in held)).map((key) => ({ kind: 'blob_cleanup' as const, target: key }));
}

function replacedArtefacts(field: FieldEntity, patch: Partial<FieldEntity>): OutboxEntry[] {
  if (!patch.artefacts) return [];
  const kept = new Set(Object.keys(patch.artefacts));
  return Object.keys(byteMap(field.artefacts))
    .filter((key) => !kept.has(key))
    .map((key) => ({ kind: 'blob_cleanup' as const, target: key }));
}

/**
 * What processing one field amounted to, for usage reporting (the account limits of spec 1.2:
 * paragraphs, characters, pages, media seconds, documents with or without media).
 */
export function usageOf(data: ExtractedFieldData): {
  paragraphs: number;
  characters: number;
  pages: number;
  media_seconds: number;
  documents: number;
  media: boolean;
  processing_seconds: number;
} {
  const metas = [data.metadata?.metadata, ...Object.values(data.metadata?.split_metadata ?? {})];
  const paragraphs = metas.reduce((n, m) => n + (Array.isArray(m?.['paragraphs']) ? (m['paragraphs'] as unknown[]).length : 0), 0);
  const characters = (data.text?.text ?? '').length + Object.values(data.text?.split_text ?? {}).reduce((n, t) => n + t.length, 0);
  const fileMeta = (data.file?.['metadata'] ?? {}) as Record<string, unknown>;
  const pages = Number(fileMeta['pages'] ?? 0) || 0;
  // Results written before `media_seconds` existed carry the length in the file's metadata only.
  const mediaSeconds = data.media_seconds ?? (Number(fileMeta['duration_seconds'] ?? 0) || 0);
  const processingSeconds =
    typeof data.processing_seconds === 'number' && Number.isFinite(data.processing_seconds) && data.processing_seconds > 0
      ? data.processing_seconds
      : 0;
  return {
    paragraphs,
    characters,
    pages,
    media_seconds: mediaSeconds,
    documents: 1,
    media: mediaSeconds > 0,
    processing_seconds: processingSeconds,
  };
}
