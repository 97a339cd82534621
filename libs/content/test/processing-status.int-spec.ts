import {
  ContentSubjects,
  DomainError,
  UnderstandingSubjects,
  extractedBlobKey,
  type ExtractedFieldData,
  type ProcessingStatusRecord,
} from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

describe('processing status records (spec 2.7, GET /processing-status)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000c1';
  const otherKb = '00000000-0000-4000-8000-0000000000c2';

  beforeAll(async () => {
    fx = await startSearchFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const status = (req: Record<string, unknown> = {}, kb = kbid) => fx.bus.request(ContentSubjects.processingStatus, { kbid: kb, ...req });
  const all = async (kb = kbid): Promise<ProcessingStatusRecord[]> => (await status({ limit: 100 }, kb)).results;

  it('records every scheduled field job with its write, completes it with its result, and pages newest first', async () => {
    const { uuid: rid, seqid } = await fx.bus.request(ContentSubjects.createResource, {
      kbid,
      body: { title: 'Two fields', texts: { a: { body: 'First text.' }, b: { body: 'Second text.' } } },
    });
    await fx.bus.request(ContentSubjects.createResource, { kbid, body: { title: 'No fields at all' } });
    let records = await all();
    expect(records).toHaveLength(2);
    expect(records.map((r) => r.request).sort()).toEqual(['text/a', 'text/b']);
    for (const r of records) {
      expect(r).toMatchObject({
        resource_id: rid,
        kbid,
        title: 'Two fields',
        labels: [],
        scheduled: true,
        completed: false,
        completed_at: null,
        failed: false,
        retries: 0,
        response: '',
        schedule_eta: 0,
      });
      expect(r.timestamp).toBe(r.scheduled_at);
    }
    // Both wait in the one shared queue, one behind the other.
    expect(records.map((r) => r.schedule_order).sort()).toEqual([1, 2]);

    const byField = new Map(records.map((r) => [r.request, r]));
    const a = byField.get('text/a')!;
    const b = byField.get('text/b')!;
    const ids = (id: string, field: string) => ({ processing_id: id, kbid, rid, field_type: 'text' as const, field_id: field, seqid });
    const data: ExtractedFieldData = {
      text: { text: 'First text.', split_text: {}, deleted_splits: [] },
      metadata: { metadata: { paragraphs: [{ start: 0, end: 11, kind: 'TEXT' }] }, split_metadata: {}, deleted_splits: [] },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    };
    await fx.blobs.put(extractedBlobKey(ids(a.processing_id, 'a')), JSON.stringify(data));
    await fx.bus.enqueue(UnderstandingSubjects.fieldProcessed, {
      ...ids(a.processing_id, 'a'),
      extracted_key: extractedBlobKey(ids(a.processing_id, 'a')),
    });
    await fx.bus.enqueue(UnderstandingSubjects.fieldProcessed, {
      ...ids(b.processing_id, 'b'),
      error: { body: 'unsupported', code: 2, code_str: 'EXTRACTION_FAILED' },
      retries: 2,
    });
    records = await eventually(
      async () => {
        const now = await all();
        return now.every((r) => r.completed) ? now : undefined;
      },
      15_000,
      'both jobs completed',
    );
    const done = new Map(records.map((r) => [r.request, r]));
    expect(done.get('text/a')).toMatchObject({
      completed: true,
      failed: false,
      response: '',
      schedule_order: 0,
      schedule_eta: 0,
      retries: 0,
    });
    expect(done.get('text/b')).toMatchObject({
      completed: true,
      failed: true,
      response: 'EXTRACTION_FAILED: unsupported',
      schedule_order: 0,
      retries: 2,
    });
    expect(Date.parse(done.get('text/a')!.completed_at!)).toBeGreaterThanOrEqual(Date.parse(a.scheduled_at));

    // A later write (a transaction, not the one-statement create) schedules and records a new job.
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid, body: { texts: { c: { body: 'Third text.' } } } });
    records = await all();
    expect(records).toHaveLength(3);
    expect(records[0]).toMatchObject({ request: 'text/c', completed: false, schedule_order: 1 });

    // Pages of one, newest first, each record once; a broken cursor is a client error.
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await status({ limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.results.map((r) => r.processing_id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(records.map((r) => r.processing_id));
    await expect(status({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: DomainError.validation([]).code });

    expect(await all(otherKb)).toEqual([]);

    // The understanding API's view: records of a set of KBs, in the order asked, one by id.
    await fx.bus.request(ContentSubjects.createResource, {
      kbid: otherKb,
      body: { title: 'Elsewhere', texts: { x: { body: 'Other KB.' } } },
    });
    const across = async (sort_on: 'timestamp' | 'completed_at', sort_order: 'asc' | 'desc', limit = 100) => {
      const ids: string[] = [];
      let next: string | null | undefined;
      do {
        const page = await fx.bus.request(ContentSubjects.processingRequests, {
          kbids: [kbid, otherKb],
          sort_on,
          sort_order,
          limit,
          ...(next ? { cursor: next } : {}),
        });
        ids.push(...page.results.map((r) => r.processing_id));
        next = page.cursor;
      } while (next);
      return ids;
    };
    const ascending = await across('timestamp', 'asc');
    expect(ascending).toHaveLength(4);
    expect(await across('timestamp', 'asc', 1)).toEqual(ascending);
    expect(await across('timestamp', 'desc', 3)).toEqual([...ascending].reverse());
    // By completion: the two completed jobs first (a before b or together), pending ones last; descending puts pending first.
    const byCompletion = await across('completed_at', 'asc', 1);
    expect(new Set(byCompletion.slice(0, 2))).toEqual(new Set([a.processing_id, b.processing_id]));
    expect((await across('completed_at', 'desc', 2)).slice(2)).toEqual(expect.arrayContaining([a.processing_id, b.processing_id]));
    expect(await fx.bus.request(ContentSubjects.processingRequest, { kbids: [kbid], processing_id: a.processing_id })).toMatchObject({
      processing_id: a.processing_id,
      completed: true,
    });
    await expect(
      fx.bus.request(ContentSubjects.processingRequest, { kbids: [otherKb], processing_id: a.processing_id }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await fx.bus.request(ContentSubjects.processingRequests, { kbids: [] })).results).toEqual([]);
    expect((await status({ scheduled: false })).results).toEqual([]);

    // The records go with their resource.
    await fx.bus.request(ContentSubjects.deleteResource, { kbid, rid });
    expect(await all()).toEqual([]);
  });
});
