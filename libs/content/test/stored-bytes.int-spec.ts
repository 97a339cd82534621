import { randomUUID } from 'node:crypto';
import {
  ContentSubjects,
  UnderstandingSubjects,
  extractedBlobKey,
  fileBlobKey,
  thumbnailBlobKey,
  type AuditRecordedEvent,
  type ExtractedFieldData,
  type ProcessFieldJob,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { BlobStore } from '@kb/platform/storage';
import { eventually } from '@kb/platform/testing';
import { startContentHarness, type ContentHarness } from './fixtures/content-harness';

/**
 * `storage_bytes` bookkeeping (docs/usage.md, "Stored bytes"): the signed `bytes` of a resource's
 * activity events, summed, always equal the bytes its blobs take in the store — through upload,
 * processing (artefacts measured by the worker), a redelivered result, reprocessing, a field's
 * and the resource's deletion.
 */
describe('stored bytes (PGlite, in-process bus, fs blobs)', () => {
  let harness: ContentHarness | undefined;
  let bus: MessageBus;
  let blobs: BlobStore;
  const jobs: ProcessFieldJob[] = [];
  const audit: AuditRecordedEvent[] = [];
  const kbid = '00000000-0000-4000-8000-0000000000c7';

  beforeAll(async () => {
    harness = await startContentHarness();
    ({ bus, blobs } = harness);
    await bus.consume(UnderstandingSubjects.processField, async (job) => void jobs.push(job), { durable: 'test-jobs' });
    await bus.subscribe(ContentSubjects.auditRecorded, async (e) => void audit.push(e), { durable: 'test-audit' });
  }, 180_000);

  afterAll(async () => {
    await harness?.close();
  });

  const jobFor = (rid: string, field: string, seqid: number) =>
    eventually(async () => jobs.find((j) => j.rid === rid && j.field_id === field && j.seqid === seqid), 5000, `job ${field}@${seqid}`);
  /** What the resource's events say it holds: their signed `bytes` summed. */
  const metered = (rid: string) =>
    audit.filter((e) => e.resource_id === rid).reduce((n, e) => n + Number(e.audit_metadata?.['bytes'] ?? 0), 0);
  /** What it really holds: every object under its prefix. */
  const inStore = async (rid: string) => {
    let total = 0;
    for await (const item of blobs.list(`content/kbs/${kbid}/r/${rid}/`)) total += item.size;
    return total;
  };
  /** Waits until the outbox's deletions and the events are through, then both must agree. */
  const settled = async (rid: string, expected?: number) =>
    eventually(
      async () => {
        const held = await inStore(rid);
        return held === metered(rid) && (expected === undefined || held === expected) ? held : undefined;
      },
      5000,
      'the metered bytes to equal the stored bytes',
    ).catch(async () => {
      throw new Error(`metered ${metered(rid)} bytes, the store holds ${await inStore(rid)}`);
    });

  /** A worker: stores the extracted JSON and (optionally) a thumbnail, and reports their sizes as the store wrote them. */
  const work = async (job: ProcessFieldJob, o: { text: string; thumbnail?: number }) => {
    const ids = {
      processing_id: job.processing_id,
      kbid,
      rid: job.rid,
      field_type: job.field_type,
      field_id: job.field_id,
      seqid: job.seqid,
    };
    const stored: Record<string, number> = {};
    const thumb = thumbnailBlobKey(ids);
    if (o.thumbnail !== undefined) stored[thumb] = (await blobs.put(thumb, Buffer.alloc(o.thumbnail, 7))).size;
    const data: ExtractedFieldData = {
      text: { text: o.text, split_text: {}, deleted_splits: [] },
      metadata: {
        metadata: { paragraphs: [{ start: 0, end: o.text.length, kind: 'TEXT', sentences: [] }] },
        split_metadata: {},
        deleted_splits: [],
      },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
      ...(o.thumbnail !== undefined ? { file: { file_thumbnail: { uri: `blob:${thumb}`, size: o.thumbnail } } } : {}),
    };
    const key = extractedBlobKey(ids);
    stored[key] = (await blobs.put(key, JSON.stringify(data))).size;
    const result = { ...ids, extracted_key: key, stored_bytes: stored };
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, result);
    return result;
  };
  const processedEvents = (rid: string) => audit.filter((e) => e.resource_id === rid && e.type === 'processed');

  it('create → process → redelivery → reprocess → delete field → delete resource: metered equals stored, back to 0', async () => {
    const rid = randomUUID();
    // The edge stores the upload, then registers it with the size it measured.
    const original = fileBlobKey(kbid, rid, 'doc');
    const size = (await blobs.put(original, Buffer.alloc(3000, 1), { contentType: 'application/pdf' })).size;
    const created = await bus.request(ContentSubjects.registerUpload, {
      kbid,
      rid,
      create: true,
      field_id: 'doc',
      file: { uri: `blob:${original}`, filename: 'a.pdf', content_type: 'application/pdf', size, md5: 'a'.repeat(32) },
    });
    await settled(rid, 3000);

    // Processing adds what it stored: the extracted JSON and a thumbnail.
    const first = await work(await jobFor(rid, 'doc', created.seqid), { text: 'first text', thumbnail: 500 });
    await eventually(async () => (processedEvents(rid).length === 1 ? true : undefined), 5000, 'processed');
    const afterFirst = await settled(rid);
    expect(afterFirst).toBe(3000 + 500 + first.stored_bytes[extractedBlobKey(first)]!);
    expect(processedEvents(rid)[0]?.audit_metadata?.['bytes']).toBe(afterFirst - 3000);

    // The same result delivered again is not applied again: no second event, no bytes.
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, first);
    await new Promise((r) => setTimeout(r, 300));
    expect(processedEvents(rid)).toHaveLength(1);
    await settled(rid, afterFirst);

    // Reprocessing replaces: a longer text and no thumbnail this time; the older JSON and the
    // thumbnail are deleted and no longer counted.
    const again = await bus.request(ContentSubjects.reprocessResource, { kbid, rid });
    const second = await work(await jobFor(rid, 'doc', again.seqid), { text: 'a much longer second text'.repeat(20) });
    await eventually(async () => (processedEvents(rid).length === 2 ? true : undefined), 5000, 'reprocessed');
    const afterSecond = await settled(rid, 3000 + second.stored_bytes[extractedBlobKey(second)]!);
    expect(await blobs.exists(extractedBlobKey(first))).toBe(false);
    expect(await blobs.exists(thumbnailBlobKey(first))).toBe(false);
    expect(processedEvents(rid)[1]?.audit_metadata?.['bytes']).toBe(afterSecond - afterFirst);

    // A worker late with a result of the older write: never applied, so its JSON does not stay uncounted.
    const late = await work({ ...(await jobFor(rid, 'doc', created.seqid)), processing_id: randomUUID() }, { text: 'late' });
    await eventually(async () => ((await blobs.exists(extractedBlobKey(late))) ? undefined : true), 5000, 'the late result deleted');
    expect(processedEvents(rid)).toHaveLength(2);
    await settled(rid, afterSecond);

    // A second field, processed, then deleted: minus exactly what it held.
    const put = await bus.request(ContentSubjects.putField, { kbid, rid, field_type: 'text', field_id: 'note', value: { body: 'a note' } });
    await work(await jobFor(rid, 'note', put.seqid), { text: 'a note' });
    await eventually(async () => (processedEvents(rid).length === 3 ? true : undefined), 5000, 'the note processed');
    expect(await settled(rid)).toBeGreaterThan(afterSecond);
    await bus.request(ContentSubjects.deleteField, { kbid, rid, field_type: 'text', field_id: 'note' });
    await settled(rid, afterSecond);

    // The resource deleted: everything it held is subtracted, nothing is left.
    await bus.request(ContentSubjects.deleteResource, { kbid, rid });
    await settled(rid, 0);
  });

  it("a late result of the older write, with a thumbnail, leaves the newer result's thumbnail and is deleted", async () => {
    const rid = randomUUID();
    const created = await bus.request(ContentSubjects.createResource, { kbid, rid, body: { texts: { body: { body: 'first' } } } });
    const older = await jobFor(rid, 'body', created.seqid);
    const again = await bus.request(ContentSubjects.reprocessResource, { kbid, rid });
    // The newer write's result lands first, with its thumbnail.
    const newer = await work(await jobFor(rid, 'body', again.seqid), { text: 'newer', thumbnail: 600 });
    await eventually(async () => (processedEvents(rid).length === 1 ? true : undefined), 5000, 'the newer result applied');
    const held = await settled(rid, 600 + newer.stored_bytes[extractedBlobKey(newer)]!);
    // A worker still running the older write's job stores its thumbnail and result afterwards:
    // its own keys, so the newer thumbnail stays; never applied, both are deleted.
    const late = await work(older, { text: 'older', thumbnail: 900 });
    expect(thumbnailBlobKey(late)).not.toBe(thumbnailBlobKey(newer));
    await eventually(
      async () => ((await blobs.exists(thumbnailBlobKey(late))) || (await blobs.exists(extractedBlobKey(late))) ? undefined : true),
      5000,
      "the late result's blobs deleted",
    );
    expect(processedEvents(rid)).toHaveLength(1);
    expect((await blobs.stat(thumbnailBlobKey(newer)))?.size).toBe(600);
    await settled(rid, held);
    await bus.request(ContentSubjects.deleteResource, { kbid, rid });
    await settled(rid, 0);
  });

  it("inline files count the edge's measured size; repeating the uri keeps it; a URL in its place deletes the file", async () => {
    const rid = randomUUID();
    const inline = fileBlobKey(kbid, rid, 'inline');
    await blobs.put(inline, Buffer.alloc(1234, 2));
    const file = (uri: string) => ({ file: { uri, filename: 'b.txt', content_type: 'text/plain' } });
    await bus.request(ContentSubjects.createResource, {
      kbid,
      rid,
      file_sizes: { inline: 1234 },
      body: { files: { inline: file(`blob:${inline}`) } },
    });
    await settled(rid, 1234);

    // A JSON write naming the same stored file (no size: clients cannot give one) keeps counting it.
    await bus.request(ContentSubjects.putField, { kbid, rid, field_type: 'file', field_id: 'inline', value: file(`blob:${inline}`) });
    await settled(rid, 1234);

    // The field now points elsewhere: its stored file is deleted with the write and leaves the count.
    await bus.request(ContentSubjects.modifyResource, { kbid, rid, body: { files: { inline: file('https://example.com/x.txt') } } });
    await settled(rid, 0);

    // One field's inline bytes, sized by the edge.
    const second = fileBlobKey(kbid, rid, 'second');
    await blobs.put(second, Buffer.alloc(77, 3));
    await bus.request(ContentSubjects.putField, {
      kbid,
      rid,
      field_type: 'file',
      field_id: 'second',
      file_size: 77,
      value: file(`blob:${second}`),
    });
    await settled(rid, 77);
    await bus.request(ContentSubjects.deleteResource, { kbid, rid });
    await settled(rid, 0);
  });
});
