import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  ContentSubjects,
  ErrorCodes,
  UnderstandingSubjects,
  extractedBlobKey,
  unstoredFileKey,
  type AuditRecordedEvent,
  type ExtractedFieldData,
  type ProcessFieldJob,
  type ResourceReindexedEvent,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { BlobStore } from '@kb/platform/storage';
import { eventually } from '@kb/platform/testing';
import { startContentHarness, type ContentHarness } from './fixtures/content-harness';
import { ResourcesRepository } from '../src/resources/resources.repository';
import { ResourceEntity } from '../src/entities/resource.entity';
import { AUDIT_BATCH } from '../src/audit/audit-batch.service';

/**
 * What happens to a resource beyond plain writes: files sent with x-skip-store (deleted once
 * processed, never orphaned), `visited` audit events on reads, and reindex requests.
 */
describe('resource lifecycle (PGlite, in-process bus, fs blobs)', () => {
  let harness: ContentHarness | undefined;
  let ds: DataSource;
  let bus: MessageBus;
  let blobs: BlobStore;
  let app: INestApplication;
  const jobs: ProcessFieldJob[] = [];
  const audit: AuditRecordedEvent[] = [];
  const reindexed: ResourceReindexedEvent[] = [];
  const kbid = '00000000-0000-4000-8000-0000000000b1';

  beforeAll(async () => {
    harness = await startContentHarness();
    ({ ds, bus, blobs, app } = harness);
    await bus.consume(UnderstandingSubjects.processField, async (job) => void jobs.push(job), { durable: 'test-jobs' });
    await bus.subscribe(ContentSubjects.auditRecorded, async (e) => void audit.push(e), { durable: 'test-audit' });
    // Reads' `visited` events go out several to a message.
    await bus.subscribe(ContentSubjects.auditBatch, async (b) => void audit.push(...b.events), { durable: 'test-audit-batch' });
    await bus.subscribe(ContentSubjects.resourceReindexed, async (e) => void reindexed.push(e), { durable: 'test-reindexed' });
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
  });

  const jobFor = (rid: string, seqid?: number) =>
    eventually(async () => jobs.find((j) => j.rid === rid && (seqid === undefined || j.seqid === seqid)));
  const fileValue = async (rid: string, field = 'doc') =>
    (await bus.request(ContentSubjects.getField, { kbid, rid, field_type: 'file', field_id: field, show: ['value'] })).value as
      { file: Record<string, unknown> } | undefined;
  /** A worker's successful result: the extracted data goes to the store, its key on the bus. */
  const processed = async (job: ProcessFieldJob) => {
    const ids = {
      processing_id: job.processing_id,
      kbid,
      rid: job.rid,
      field_type: job.field_type,
      field_id: job.field_id,
      seqid: job.seqid,
    };
    const data: ExtractedFieldData = {
      text: { text: 'hello', split_text: {}, deleted_splits: [] },
      metadata: { metadata: { paragraphs: [{ start: 0, end: 5, kind: 'TEXT', sentences: [] }] }, split_metadata: {}, deleted_splits: [] },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    };
    await blobs.put(extractedBlobKey(ids), JSON.stringify(data));
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: extractedBlobKey(ids) });
  };
  /** The edge stores an x-skip-store file under a directory of its own before calling content. */
  const stage = async (rid: string, field = 'doc') => {
    const key = unstoredFileKey(kbid, rid, field, randomUUID());
    await blobs.put(key, Buffer.from('hello'), { contentType: 'text/plain' });
    return key;
  };
  const fileInput = (key: string) => ({
    file: { uri: `blob:${key}`, filename: 'a.txt', content_type: 'text/plain', md5: '5d41402abc4b2a76b9719d911017c592' },
  });

  describe('x-skip-store', () => {
    it('processing reads the file, then it is deleted and the field no longer points at it', async () => {
      const rid = randomUUID();
      const key = await stage(rid);
      await bus.request(ContentSubjects.createResource, {
        kbid,
        rid,
        skip_store: true,
        body: { title: 'Skip', files: { doc: fileInput(key) } },
      });
      const job = await jobFor(rid);
      // The worker is told where the bytes are; they are still there until its result is applied.
      expect((job.value['file'] as { uri: string }).uri).toBe(`blob:${key}`);
      expect(await blobs.exists(key)).toBe(true);
      expect((await fileValue(rid))?.file['uri']).toBe(`blob:${key}`);

      await processed(job);
      await eventually(
        async () => ((await fileValue(rid))?.file['uri'] === undefined ? true : undefined),
        5000,
        'the field to stop pointing at the file',
      );
      await eventually(async () => ((await blobs.exists(key)) ? undefined : true), 5000, 'the unstored file to be deleted');
      const value = await fileValue(rid);
      expect(value?.file).toEqual({ filename: 'a.txt', content_type: 'text/plain', md5: '5d41402abc4b2a76b9719d911017c592' });
      expect(value).not.toHaveProperty('skip_store');
      const keys: string[] = [];
      for await (const item of blobs.list(`content/kbs/${kbid}/r/${rid}/f/file/doc/`)) keys.push(item.key);
      expect(keys).toEqual([extractedBlobKey({ kbid, rid, field_type: 'file', field_id: 'doc', seqid: job.seqid })]);

      // Nothing is left to process again: naming the field is refused, a resource-wide reprocess skips it.
      await expect(
        bus.request(ContentSubjects.reprocessResource, { kbid, rid, field_type: 'file', field_id: 'doc' }),
      ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
      const { seqid } = await bus.request(ContentSubjects.reprocessResource, { kbid, rid });
      await new Promise((r) => setTimeout(r, 200));
      expect(jobs.filter((j) => j.rid === rid && j.seqid === seqid)).toEqual([]);
      expect((await bus.request(ContentSubjects.getResource, { kbid, rid })).metadata?.['status']).toBe('PROCESSED');
    });

    it('a processing error also releases the file', async () => {
      const rid = randomUUID();
      await bus.request(ContentSubjects.createResource, { kbid, rid, body: { title: 'Holder' } });
      const key = await stage(rid, 'scan');
      await bus.request(ContentSubjects.putField, {
        kbid,
        rid,
        field_type: 'file',
        field_id: 'scan',
        skip_store: true,
        value: fileInput(key),
      });
      const job = await jobFor(rid);
      await bus.enqueue(UnderstandingSubjects.fieldProcessed, {
        ...job,
        error: { body: 'cannot read', code: 500, code_str: 'CORRUPT_FILE' },
      });
      await eventually(async () => ((await blobs.exists(key)) ? undefined : true), 5000, 'the unstored file to be deleted');
      expect((await fileValue(rid, 'scan'))?.file['uri']).toBeUndefined();
    });

    it('a newer write before processing finished: the superseded file goes at once, the newer one after its own result', async () => {
      const rid = randomUUID();
      const first = await stage(rid);
      await bus.request(ContentSubjects.createResource, {
        kbid,
        rid,
        skip_store: true,
        body: { title: 'Twice', files: { doc: fileInput(first) } },
      });
      const firstJob = await jobFor(rid);
      const second = await stage(rid);
      const { seqid } = await bus.request(ContentSubjects.modifyResource, {
        kbid,
        rid,
        skip_store: true,
        body: { files: { doc: fileInput(second) } },
      });
      await eventually(async () => ((await blobs.exists(first)) ? undefined : true), 5000, 'the superseded file to be deleted');
      expect(await blobs.exists(second)).toBe(true);
      // The older job's result is stale: it changes nothing.
      await processed(firstJob);
      await new Promise((r) => setTimeout(r, 300));
      expect(await blobs.exists(second)).toBe(true);
      await processed(await jobFor(rid, seqid));
      await eventually(async () => ((await blobs.exists(second)) ? undefined : true), 5000, 'the newer file to be deleted');
    });

    it('without the header, the same kind of key is kept; files are never taken from another resource or KB', async () => {
      const rid = randomUUID();
      const key = await stage(rid);
      await bus.request(ContentSubjects.createResource, { kbid, rid, body: { title: 'Kept', files: { doc: fileInput(key) } } });
      await processed(await jobFor(rid));
      await eventually(async () =>
        (await bus.request(ContentSubjects.getResource, { kbid, rid })).metadata?.['status'] === 'PROCESSED' ? true : undefined,
      );
      expect(await blobs.exists(key)).toBe(true);

      const other = randomUUID();
      await bus.request(ContentSubjects.createResource, { kbid, rid: other, body: { title: 'Thief' } });
      const before = await bus.request(ContentSubjects.getResource, { kbid, rid: other, show: ['basic', 'values'] });
      for (const uri of [`blob:${key}`, 'blob:content/kbs/another-kb/r/x/f/file/doc/original']) {
        await expect(
          bus.request(ContentSubjects.modifyResource, { kbid, rid: other, skip_store: true, body: { files: { doc: { file: { uri } } } } }),
        ).rejects.toMatchObject({
          code: ErrorCodes.VALIDATION_FAILED,
          details: { detail: [expect.objectContaining({ loc: ['body', 'files', 'doc', 'file', 'uri'] })] },
        });
      }
      expect(await bus.request(ContentSubjects.getResource, { kbid, rid: other, show: ['basic', 'values'] })).toEqual(before);
      expect(await blobs.exists(key)).toBe(true);
    });
  });

  it('reads a resource outside a transaction exactly as TypeORM hydrates it (by id and by slug)', async () => {
    const { uuid } = await bus.request(ContentSubjects.createResource, {
      kbid,
      body: {
        title: 'Hydrated',
        slug: 'hydrated',
        summary: 's',
        metadata: { language: 'en' },
        usermetadata: { classifications: [{ labelset: 'a', label: 'b' }] },
        origin: { url: 'https://example.org', tags: ['t'] },
        security: { access_groups: ['g1'] },
        texts: { body: { body: 'x' } },
      },
    });
    const repo = app.get(ResourcesRepository);
    const viaTypeorm = await ds.manager.findOneBy(ResourceEntity, { kbid, id: uuid });
    expect(viaTypeorm).not.toBeNull();
    const byId = await repo.findById(kbid, uuid);
    expect(byId).toEqual(viaTypeorm);
    expect(byId).toBeInstanceOf(ResourceEntity);
    expect(typeof byId?.lastSeqid).toBe('number');
    expect(byId?.createdAt).toBeInstanceOf(Date);
    expect(await repo.findBySlug(kbid, 'hydrated')).toEqual(viaTypeorm);
    expect(await repo.findById(kbid, '00000000-0000-4000-8000-00000000dead')).toBeNull();
    expect(await repo.findBySlug('00000000-0000-4000-8000-0000000000b2', 'hydrated')).toBeNull();
  });

  describe('visited', () => {
    it('a read on behalf of a caller, by id or slug, is recorded with user, client type and duration; internal reads are not', async () => {
      const { uuid } = await bus.request(ContentSubjects.createResource, { kbid, body: { title: 'Read me', slug: 'read-me' } });
      await bus.request(ContentSubjects.getResource, { kbid, rid: uuid, actor: { user: 'alice', client_type: 'web' } });
      await bus.request(ContentSubjects.getResource, { kbid, slug: 'read-me', actor: { user: 'bob', client_type: 'api' } });
      await bus.request(ContentSubjects.getResource, { kbid, rid: uuid });
      const visits = await eventually(async () => {
        const found = audit.filter((e) => e.type === 'visited' && e.resource_id === uuid);
        return found.length >= 2 ? found : undefined;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(audit.filter((e) => e.type === 'visited' && e.resource_id === uuid)).toHaveLength(2);
      expect(visits.map((v) => [v.user_id, v.client_type]).sort()).toEqual([
        ['alice', 'web'],
        ['bob', 'api'],
      ]);
      for (const v of visits)
        expect(v).toMatchObject({ kbid, user_type: 'user', total_duration: expect.any(Number), event_id: expect.any(String) });
    });

    it('every read of a burst is recorded exactly once, batched with the others (AuditBatchService)', async () => {
      const { uuid } = await bus.request(ContentSubjects.createResource, { kbid, body: { title: 'Read by many' } });
      const reads = AUDIT_BATCH + 94; // more than one batch, fewer than two full ones
      await Promise.all(
        Array.from({ length: reads }, (_, i) =>
          bus.request(ContentSubjects.getResource, { kbid, rid: uuid, actor: { user: `u${i}`, client_type: 'api' } }),
        ),
      );
      const visits = await eventually(async () => {
        const found = audit.filter((e) => e.type === 'visited' && e.resource_id === uuid);
        return found.length >= reads ? found : undefined;
      });
      await new Promise((r) => setTimeout(r, 400)); // a late duplicate would arrive within a flush
      expect(audit.filter((e) => e.type === 'visited' && e.resource_id === uuid)).toHaveLength(reads);
      expect(new Set(visits.map((v) => v.event_id)).size).toBe(reads);
      expect(new Set(visits.map((v) => v.user_id))).toEqual(new Set(Array.from({ length: reads }, (_, i) => `u${i}`)));
    });

    it('a read of a missing resource records nothing and still answers 404', async () => {
      const rid = randomUUID();
      await expect(bus.request(ContentSubjects.getResource, { kbid, rid, actor: { user: 'alice' } })).rejects.toMatchObject({
        code: ErrorCodes.RESOURCE_NOT_FOUND,
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(audit.filter((e) => e.resource_id === rid)).toEqual([]);
    });
  });

  describe('reindex', () => {
    it('emits content.resource.reindexed with the fields; by slug too; an unknown resource is 404', async () => {
      const { uuid } = await bus.request(ContentSubjects.createResource, {
        kbid,
        body: { title: 'Index me', slug: 'index-me', texts: { body: { body: 'hello' } } },
      });
      await processed(await jobFor(uuid));
      await eventually(async () =>
        (await bus.request(ContentSubjects.getResource, { kbid, rid: uuid })).metadata?.['status'] === 'PROCESSED' ? true : undefined,
      );
      const seqidBefore = (await bus.request(ContentSubjects.getResource, { kbid, rid: uuid })).last_seqid;
      expect(await bus.request(ContentSubjects.reindexResource, { kbid, slug: 'index-me' })).toEqual({});
      const event = await eventually(async () => reindexed.find((e) => e.rid === uuid));
      expect(event).toMatchObject({
        kbid,
        rid: uuid,
        reindex_vectors: false,
        fields: [{ field_type: 'text', field_id: 'body', seqid: expect.any(Number), status: 'PROCESSED' }],
      });
      // Without reindex_vectors nothing is processed again.
      const after = await bus.request(ContentSubjects.getResource, { kbid, rid: uuid });
      expect(after.last_seqid).toBe(seqidBefore);
      expect(after.metadata?.['status']).toBe('PROCESSED');
      await expect(bus.request(ContentSubjects.reindexResource, { kbid, rid: randomUUID() })).rejects.toMatchObject({
        code: ErrorCodes.RESOURCE_NOT_FOUND,
      });
    });

    it('with reindex_vectors every field is processed again (not a file whose bytes were not kept)', async () => {
      const rid = randomUUID();
      const key = await stage(rid);
      await bus.request(ContentSubjects.createResource, {
        kbid,
        rid,
        skip_store: true,
        body: { title: 'Vectors', texts: { body: { body: 'hello' } }, files: { doc: fileInput(key) } },
      });
      const first = await eventually(async () => {
        const mine = jobs.filter((j) => j.rid === rid);
        return mine.length === 2 ? mine : undefined;
      });
      for (const job of first) await processed(job);
      await eventually(async () => ((await blobs.exists(key)) ? undefined : true));
      await bus.request(ContentSubjects.reindexResource, { kbid, rid, reindex_vectors: true });
      const event = await eventually(async () => reindexed.find((e) => e.rid === rid));
      expect(event.reindex_vectors).toBe(true);
      const again = await eventually(async () => {
        const mine = jobs.filter((j) => j.rid === rid && j.seqid > event.fields.find((f) => f.field_id === 'doc')!.seqid);
        return mine.length > 0 ? mine : undefined;
      });
      expect(again.map((j) => `${j.field_type}/${j.field_id}`)).toEqual(['text/body']);
      expect(event.fields.map((f) => [f.field_type, f.field_id, f.status]).sort()).toEqual([
        ['file', 'doc', 'PROCESSED'],
        ['text', 'body', 'PENDING'],
      ]);
      expect((await bus.request(ContentSubjects.getResource, { kbid, rid })).metadata?.['status']).toBe('PENDING');
    });
  });
});
