import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  type CreateResourceRequest,
  type DeleteResourceRequest,
  type ModifyResourceRequest,
  type ReindexResourceRequest,
  type ResourceCreatedDto,
  type ResourceWriteDto,
  type SeqIdDto,
} from '@kb/contracts';
import { translateUniqueViolation } from '@kb/platform/database';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import { OutboxService } from '../outbox/outbox.service';
import { LabelSetsService } from '../labelsets/labelsets.service';
import { bodyFieldLoc, fieldWritesOf, keepStoredSecrets, writesCarryMask, type FieldWrite } from './field-values';
import { auditEntry, pendingFieldRows, processingJobs, reindexedEvent } from './write-effects';
import {
  byteMap,
  heldBytes,
  keepMeasuredSizes,
  supersededFiles,
  withPushedAttachments,
  writtenBytes,
  type PushedBytes,
} from './held-bytes';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { isReleased, prepareFileWrites, supersededUnstored } from './unstored-files';
import { deriveResourceStatus } from './resource-status';
import { ResourcesRepository } from './resources.repository';
import { SUMMARY_GENERATED } from './resource-summary';
import { SearchIndexerService } from '../search/index/search-indexer.service';
import { resourceTags } from '../search/index/tags';
import { KbNotifier } from '../notifications/kb-notifier.service';

export const resourceBlobPrefix = (kbid: string, rid: string) => `content/kbs/${kbid}/r/${rid}/`;

/**
 * Resource writes. Each write runs in one transaction that also records, in the outbox, the
 * processing jobs and audit events it causes; they are relayed after commit, so a crash can
 * delay them but never drop them.
 */
/** Unique constraints a taken resource id violates (the one-statement insert may check the fields' first). */
export const RESOURCE_ID_CONSTRAINTS = ['resources_pkey', 'fields_pkey'];

@Injectable()
export class ResourcesService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly repo: ResourcesRepository,
    private readonly outbox: OutboxService,
    private readonly labelsets: LabelSetsService,
    private readonly indexer: SearchIndexerService,
    private readonly notifier: KbNotifier,
    private readonly configs: KbConfigsService,
  ) {}

  /**
   * `fileSizes` records the byte size of uploaded files (known to the edge that stored them);
   * `attachments` the message attachments a push stored, by conversation field and key.
   */
  async create(
    req: CreateResourceRequest,
    fileSizes: Record<string, number> = {},
    attachments?: PushedBytes['attachments'],
  ): Promise<ResourceCreatedDto> {
    const started = Date.now();
    const now = new Date();
    const body = req.body;
    const rid = req.rid ?? randomUUID();
    await this.assertLabels(req.kbid, body);
    const writes = fieldWritesOf(body, now.toISOString());
    await this.configs.assertFieldStrategies(req.kbid, writes, bodyFieldLoc);
    await this.configs.checkKeyValues(req.kbid, writes, bodyFieldLoc);
    withFileSizes(writes, { ...byteMap(req.file_sizes), ...fileSizes });
    // Taken outside the write: a sequence value is never rolled back, so nothing is gained inside.
    const seqid = await this.repo.nextSeqid();
    const resource: ResourceEntity = {
      id: rid,
      kbid: req.kbid,
      slug: body.slug ?? rid,
      title: body.title ?? '',
      summary: body.summary ?? '',
      icon: body.icon ?? '',
      thumbnail: body.thumbnail ?? '',
      metadata: { ...(body.metadata ?? {}) },
      usermetadata: { classifications: body.usermetadata?.classifications ?? [], relations: body.usermetadata?.relations ?? [] },
      fieldmetadata: body.fieldmetadata ?? [],
      computedmetadata: { field_classifications: [] },
      origin: { ...(body.origin ?? {}), source: 'API' },
      extra: body.extra ? { metadata: body.extra.metadata ?? {} } : {},
      relations: [],
      accessGroups: body.security?.access_groups ?? [],
      hidden: body.hidden ?? false,
      status: writes.length > 0 ? 'PENDING' : 'PROCESSED',
      createdAt: now,
      modifiedAt: now,
      lastSeqid: seqid,
    };
    resource.searchTags = resourceTags(resource);
    const fields = withPushedAttachments(
      pendingFieldRows(resource, prepareFileWrites(resource, writes, req.skip_store), seqid, now),
      [],
      attachments,
    );
    const outboxRows = this.outbox.rowsFor([
      ...processingJobs(resource, fields, req.processing_labels, req.processing_webhook, req.actor?.nua_key_id),
      auditEntry(req.kbid, 'new', rid, req.actor, started, heldBytes(fields)),
    ]);
    await translateUniqueViolation(
      async () => {
        // With fields, the resource, its fields and its outbox rows go in one statement; the title
        // is indexed with the first processing result. A resource without fields is searchable by
        // its title at once, which takes the index's statements and so a transaction.
        if (fields.length > 0) return this.repo.insertNew(resource, fields, outboxRows);
        await this.ds.transaction(async (m) => {
          await this.repo.insertResource(m, resource);
          await this.indexer.syncResource(m, resource, { fresh: true });
          await this.outbox.insertRows(m, outboxRows);
        });
      },
      { code: ErrorCodes.SLUG_CONFLICT, message: `Resource slug ${body.slug} already exists` },
    ).catch((err: unknown) => {
      // The id (set by an upload or a push) was taken, not the slug: say so.
      if (
        err instanceof DomainError &&
        err.code === ErrorCodes.SLUG_CONFLICT &&
        RESOURCE_ID_CONSTRAINTS.includes(String(err.details?.['constraint']))
      ) {
        throw new DomainError(ErrorCodes.CONFLICT, `A resource with id ${rid} already exists`, err.details);
      }
      throw err;
    });
    this.outbox.relayInBackground(outboxRows);
    this.notifier.written(req.kbid, resource, seqid, 'created');
    // Without fields there is nothing to process: the resource was indexed with its write.
    if (fields.length === 0) this.notifier.indexed(req.kbid, resource, seqid);
    return { uuid: rid, seqid, elapsed: (Date.now() - started) / 1000 };
  }

  /** `pushed`: what a push stored for this write (see create). */
  async modify(req: ModifyResourceRequest, pushed?: PushedBytes): Promise<SeqIdDto> {
    const started = Date.now();
    const now = new Date();
    const body = req.body;
    await this.assertLabels(req.kbid, body);
    const writes = withFileSizes(fieldWritesOf(body, now.toISOString()), { ...byteMap(req.file_sizes), ...pushed?.files });
    await this.configs.assertFieldStrategies(req.kbid, writes, bodyFieldLoc);
    await this.configs.checkKeyValues(req.kbid, writes, bodyFieldLoc);
    const result = await translateUniqueViolation(
      () =>
        this.ds.transaction(async (m) => {
          const current = await this.repo.lockByRef(m, req);
          const seqid = await this.repo.nextSeqid(m);
          const patch = this.resourcePatch(current, body);
          const carries = writes.some((w) => w.fieldType === 'file') || Object.keys(pushed?.attachments ?? {}).length > 0;
          const previous = carries ? await this.repo.fieldsOf(current.id, m) : [];
          const fields = await this.writeFields(m, current, writes, seqid, now, req.skip_store, (rows) =>
            keepMeasuredSizes(previous, withPushedAttachments(rows, previous, pushed?.attachments)),
          );
          const allFields = await this.repo.fieldsOf(current.id, m);
          patch.status = deriveResourceStatus(allFields.map((f) => f.status));
          await this.repo.updateResource(m, current.id, { ...patch, modifiedAt: now, lastSeqid: seqid });
          await this.indexer.syncResource(m, { ...current, ...patch, modifiedAt: now, lastSeqid: seqid });
          const entries = [
            ...processingJobs({ ...current, ...patch }, fields, req.processing_labels, req.processing_webhook, req.actor?.nua_key_id),
            ...supersededUnstored(previous, fields),
            ...supersededFiles(previous, fields),
            auditEntry(req.kbid, 'modified', current.id, req.actor, started, writtenBytes(previous, fields)),
          ];
          return { seqid, resource: { id: current.id, title: patch.title ?? current.title }, rows: await this.outbox.add(m, entries) };
        }),
      { code: ErrorCodes.SLUG_CONFLICT, message: `Slug already exists: ${body.slug}` },
    );
    this.outbox.relayInBackground(result.rows);
    this.notifier.written(req.kbid, result.resource, result.seqid, 'modified');
    return { seqid: result.seqid };
  }

  async delete(req: DeleteResourceRequest): Promise<Record<string, never>> {
    const started = Date.now();
    let deleted: ResourceEntity | undefined;
    const rows = await this.ds.transaction(async (m) => {
      const current = await this.repo.lockByRef(m, req);
      deleted = current;
      const bytes = heldBytes(await this.repo.fieldsOf(current.id, m));
      await this.indexer.unindexResource(m, req.kbid, current.id);
      await this.repo.deleteResource(m, current.id);
      // Blobs go after the rows: the cleanup is recorded in the same transaction, so it cannot be forgotten.
      return this.outbox.add(m, [
        { kind: 'blob_cleanup', target: resourceBlobPrefix(req.kbid, current.id) },
        auditEntry(req.kbid, 'deleted', current.id, req.actor, started, -bytes),
      ]);
    });
    this.outbox.relayInBackground(rows);
    if (deleted) this.notifier.written(req.kbid, deleted, Number(deleted.lastSeqid), 'deleted');
    return {};
  }

  /**
   * Reindex: the search index rebuilds the resource's rows from the fields' stored extracted data,
   * told by `content.resource.reindexed` (recorded in the outbox with the request, so never lost).
   * With `reindex_vectors`, every field is also processed again, as reprocess does; a file whose
   * bytes were not kept (x-skip-store) cannot be and keeps its extracted data.
   */
  async reindex(req: ReindexResourceRequest): Promise<Record<string, never>> {
    const rows = await this.ds.transaction(async (m) => {
      const current = await this.repo.lockByRef(m, req);
      let fields = await this.repo.fieldsOf(current.id, m);
      const jobs: ReturnType<typeof processingJobs> = [];
      if (req.reindex_vectors) {
        const now = new Date();
        const seqid = await this.repo.nextSeqid(m);
        const again = pendingFieldRows(
          current,
          fields.filter((f) => !isReleased(f)).map((f) => ({ fieldType: f.fieldType, fieldId: f.fieldId, value: f.value })),
          seqid,
          now,
        );
        if (again.length > 0) {
          await this.repo.upsertFields(m, again);
          fields = await this.repo.fieldsOf(current.id, m);
          const patch = { status: deriveResourceStatus(fields.map((f) => f.status)), lastSeqid: seqid, modifiedAt: now };
          await this.repo.updateResource(m, current.id, patch);
          await this.indexer.syncResource(m, { ...current, ...patch });
          jobs.push(...processingJobs(current, again));
        }
      }
      return this.outbox.add(m, [...jobs, reindexedEvent(current, req.reindex_vectors ?? false, fields)]);
    });
    this.outbox.relayInBackground(rows);
    return {};
  }

  private async assertLabels(kbid: string, body: ResourceWriteDto): Promise<void> {
    const issues = await this.labelsets.classificationIssues(kbid, body.usermetadata?.classifications, [
      'body',
      'usermetadata',
      'classifications',
    ]);
    if (issues.length > 0) throw DomainError.validation(issues);
  }

  private resourcePatch(current: ResourceEntity, body: ResourceWriteDto): Partial<ResourceEntity> {
    const patch: Partial<ResourceEntity> = {};
    if (body.title !== undefined) patch.title = body.title;
    if (body.summary !== undefined) {
      // The user's summary replaces processing's for good.
      patch.summary = body.summary;
      patch.computedmetadata = { ...current.computedmetadata, [SUMMARY_GENERATED]: false };
    }
    if (body.slug !== undefined) patch.slug = body.slug;
    if (body.icon !== undefined) patch.icon = body.icon;
    if (body.thumbnail !== undefined) patch.thumbnail = body.thumbnail;
    if (body.metadata !== undefined) patch.metadata = { ...current.metadata, ...body.metadata };
    if (body.usermetadata !== undefined) patch.usermetadata = { ...current.usermetadata, ...body.usermetadata };
    if (body.fieldmetadata !== undefined) patch.fieldmetadata = body.fieldmetadata;
    if (body.origin !== undefined) patch.origin = { ...body.origin, source: 'API' };
    // `extra` unset keeps the stored one (spec 4.2).
    if (body.extra !== undefined) patch.extra = { metadata: body.extra.metadata ?? {} };
    if (body.security !== undefined) patch.accessGroups = body.security.access_groups ?? [];
    // `hidden` unset leaves it unchanged (spec 3).
    if (body.hidden !== undefined) patch.hidden = body.hidden;
    return patch;
  }

  private async writeFields(
    m: EntityManager,
    resource: ResourceEntity,
    writes: FieldWrite[],
    seqid: number,
    now: Date,
    skipStore?: boolean,
    finish: (rows: FieldEntity[]) => FieldEntity[] = (rows) => rows,
  ): Promise<FieldEntity[]> {
    const kept = writesCarryMask(writes) ? keepStoredSecrets(writes, await this.repo.fieldsOf(resource.id, m)) : writes;
    const fields = finish(pendingFieldRows(resource, prepareFileWrites(resource, kept, skipStore), seqid, now));
    await this.repo.upsertFields(m, fields);
    return fields;
  }
}

/** The sizes the edge measured, on the file writes they belong to (a client's own `size` is not taken for them). */
function withFileSizes(writes: FieldWrite[], sizes: Record<string, number>): FieldWrite[] {
  for (const w of writes)
    if (w.fieldType === 'file' && sizes[w.fieldId] !== undefined) (w.value['file'] as Record<string, unknown>)['size'] = sizes[w.fieldId];
  return writes;
}
