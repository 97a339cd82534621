import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import { OutboxService } from '../outbox/outbox.service';
import { byteMap, heldBytes, withImportedBlobs } from '../resources/held-bytes';
import { ResourcesRepository } from '../resources/resources.repository';
import { resourceBlobPrefix } from '../resources/resources.service';
import { auditEntry, processingJobs } from '../resources/write-effects';
import { SearchIndexerService } from '../search/index/search-indexer.service';
import { resourceTags } from '../search/index/tags';
import type { ArchiveResource } from './archive-format';

/**
 * The resources an import writes, metered as every other write (docs/usage.md, docs/export-format.md).
 *
 * A resource's files follow its line in the archive, so the line is first **staged** (kept on the
 * import's row of `content.kb_import_resources`, invisible to the KB), its files are stored and
 * each one's size, as the store reported it, recorded on that row; then the resource is
 * **written**: in one transaction its rows and index rows with the sizes on its fields (as a write
 * records them, see withImportedBlobs), its `new` activity event with the bytes it holds (so
 * `resources` +1 and `storage_bytes` + those bytes, exactly once: the event is in the same
 * transaction's outbox), the processing of fields not processed yet (their files are stored by
 * then), and the row marked `metered`. Undoing an import (a failure, or a retry after a crash)
 * deletes each resource it wrote like a resource deletion does — a `deleted` event subtracting
 * what the resource holds then — for the metered ones only: a staged resource was never counted
 * (its stored files go with its prefix).
 */
@Injectable()
export class ImportedResources {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly repo: ResourcesRepository,
    private readonly indexer: SearchIndexerService,
    private readonly outbox: OutboxService,
  ) {}

  /** Keeps a checked resource line (its ids already rewritten), the `position`-th of the archive, until its files are stored. */
  async stage(importId: string, r: ArchiveResource, position: number): Promise<void> {
    await this.ds.query(`INSERT INTO content.kb_import_resources (import_id, rid, staged, position) VALUES ($1, $2, $3, $4)`, [
      importId,
      r.rid,
      JSON.stringify(r),
      position,
    ]);
  }

  /** Whether the resource is staged by this import and not written yet (its files may be stored). */
  async isStaged(importId: string, rid: string): Promise<boolean> {
    const rows = (await this.ds.query(
      `SELECT 1 AS x FROM content.kb_import_resources WHERE import_id = $1 AND rid = $2 AND staged IS NOT NULL`,
      [importId, rid],
    )) as unknown[];
    return rows.length > 0;
  }

  /** Records a stored file of a staged resource with the bytes the store reported. */
  async recordBlob(importId: string, rid: string, key: string, bytes: number): Promise<void> {
    await this.ds.query(
      `UPDATE content.kb_import_resources SET blobs = blobs || jsonb_build_object($3::text, $4::bigint) WHERE import_id = $1 AND rid = $2`,
      [importId, rid, key, bytes],
    );
  }

  /**
   * Writes, in the archive's order, every resource the import staged and has not written yet (or
   * those up to `rid`'s position: the files of each come in that order, so theirs are all stored).
   */
  async writeStaged(importId: string, kbid: string, rid?: string): Promise<void> {
    const rows = (await this.ds.query(
      `SELECT rid FROM content.kb_import_resources WHERE import_id = $1 AND staged IS NOT NULL
         ${rid ? 'AND position <= (SELECT position FROM content.kb_import_resources WHERE import_id = $1 AND rid = $2)' : ''}
       ORDER BY position`,
      rid ? [importId, rid] : [importId],
    )) as { rid: string }[];
    for (const row of rows) await this.writeOne(importId, kbid, row.rid);
  }

  private async writeOne(importId: string, kbid: string, rid: string): Promise<void> {
    const started = Date.now();
    const outboxRows = await this.ds.transaction(async (m) => {
      const [row] = (await m.query(
        `SELECT staged, blobs FROM content.kb_import_resources WHERE import_id = $1 AND rid = $2 AND staged IS NOT NULL FOR UPDATE`,
        [importId, rid],
      )) as { staged: string; blobs: unknown }[];
      if (!row) return [];
      const r = JSON.parse(row.staged) as ArchiveResource;
      const seqid = await this.repo.nextSeqid(m);
      const resource = resourceOf(kbid, r, seqid);
      const { rows: fields, strays } = withImportedBlobs(fieldsOf(kbid, r, seqid), byteMap(row.blobs));
      await this.repo.insertResource(m, resource);
      await this.repo.upsertFields(m, fields);
      await this.indexer.reindexResource(m, resource, fields);
      await m.query(
        `UPDATE content.kb_import_resources SET staged = NULL, blobs = '{}'::jsonb, metered = true WHERE import_id = $1 AND rid = $2`,
        [importId, rid],
      );
      return this.outbox.add(m, [
        // Fields the source had not processed yet are processed here, their files stored by now.
        ...processingJobs(
          resource,
          fields.filter((f) => f.status === 'PENDING'),
        ),
        // Files under no field of the resource: nothing would count them, nor delete them before the resource.
        ...strays.map((key) => ({ kind: 'blob_cleanup' as const, target: key })),
        auditEntry(kbid, 'new', rid, undefined, started, heldBytes(fields)),
      ]);
    });
    this.outbox.relayInBackground(outboxRows);
  }

  /** Removes every resource this import wrote or staged (rows, index rows, then their files through the outbox). */
  async undo(importId: string, kbid: string): Promise<void> {
    const rows = (await this.ds.query(`SELECT rid, metered FROM content.kb_import_resources WHERE import_id = $1`, [importId])) as {
      rid: string;
      metered: boolean;
    }[];
    for (const { rid, metered } of rows) {
      const started = Date.now();
      const outboxRows = await this.ds.transaction(async (m) => {
        // What a metered resource holds now (processing may have changed it since): subtracted as a deletion does.
        // One a user deleted in the meantime had its own deletion metered.
        const bytes = metered ? await this.heldNow(m, kbid, rid) : undefined;
        await this.indexer.unindexResource(m, kbid, rid);
        await m.query(`DELETE FROM content.resources WHERE id = $1 AND kbid = $2`, [rid, kbid]);
        await m.query(`DELETE FROM content.kb_import_resources WHERE import_id = $1 AND rid = $2`, [importId, rid]);
        return this.outbox.add(m, [
          { kind: 'blob_cleanup', target: resourceBlobPrefix(kbid, rid) },
          ...(bytes !== undefined ? [auditEntry(kbid, 'deleted', rid, undefined, started, -bytes)] : []),
        ]);
      });
      await this.outbox.relay(outboxRows);
    }
  }

  private async heldNow(m: EntityManager, kbid: string, rid: string): Promise<number | undefined> {
    const found = (await m.query(`SELECT id FROM content.resources WHERE id = $1 AND kbid = $2 FOR UPDATE`, [rid, kbid])) as unknown[];
    if (found.length === 0) return undefined;
    return heldBytes(await this.repo.fieldsOf(rid, m));
  }
}

function resourceOf(kbid: string, r: ArchiveResource, seqid: number): ResourceEntity {
  const resource: ResourceEntity = {
    id: r.rid,
    kbid,
    slug: r.slug,
    title: r.title,
    summary: r.summary,
    icon: r.icon,
    thumbnail: r.thumbnail,
    metadata: r.metadata,
    usermetadata: r.usermetadata,
    fieldmetadata: r.fieldmetadata,
    computedmetadata: r.computedmetadata,
    origin: r.origin,
    extra: r.extra,
    relations: r.relations,
    accessGroups: r.access_groups,
    hidden: r.hidden,
    status: r.status,
    createdAt: new Date(r.created_at),
    modifiedAt: new Date(r.modified_at),
    lastSeqid: seqid,
  };
  resource.searchTags = resourceTags(resource);
  return resource;
}

function fieldsOf(kbid: string, r: ArchiveResource, seqid: number): FieldEntity[] {
  return r.fields.map((f) => ({
    rid: r.rid,
    fieldType: f.field_type,
    fieldId: f.field_id,
    kbid,
    value: f.value,
    extracted: f.extracted,
    status: f.status,
    error: f.error as FieldEntity['error'],
    errors: f.errors as unknown as FieldEntity['errors'],
    seqid,
    modifiedAt: new Date(f.modified_at),
  }));
}
