import {
  ContentSubjects,
  ErrorCodes,
  extractedBlobKey,
  UnderstandingSubjects,
  type AuditRecordedEvent,
  type ProcessingPullRequest,
  type ProcessingPullResult,
} from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

describe('Pull (understanding API, content.processing.pull)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000e1';
  const otherKb = '00000000-0000-4000-8000-0000000000e2';

  beforeAll(async () => {
    fx = await startSearchFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  /** Creates a resource with one text field and completes its job as a worker would (or with an error). */
  const processed = async (text: string, o: { kb?: string; error?: boolean } = {}): Promise<{ rid: string; processingId: string }> => {
    const kb = o.kb ?? kbid;
    const { uuid, seqid } = await fx.bus.request(ContentSubjects.createResource, {
      kbid: kb,
      body: { title: text.slice(0, 20), texts: { body: { body: text } } },
    });
    const record = (await fx.bus.request(ContentSubjects.processingStatus, { kbid: kb, limit: 100 })).results.find(
      (r) => r.resource_id === uuid,
    );
    const ids = { processing_id: record?.processing_id ?? '', kbid: kb, rid: uuid, field_type: 'text' as const, field_id: 'body', seqid };
    if (o.error) {
      await fx.bus.enqueue(UnderstandingSubjects.fieldProcessed, {
        ...ids,
        error: { body: 'The file is corrupt', code: 422, code_str: 'CORRUPT_FILE' },
        retries: 2,
      });
    } else {
      const data = {
        text: { text, split_text: {}, deleted_splits: [] },
        metadata: {
          metadata: {
            paragraphs: [{ start: 0, end: text.length, kind: 'TEXT', key: `${uuid}/t/body/0-${text.length}` }],
            language: 'en',
            mime_type: 'text/plain',
            ner: {},
          },
          split_metadata: {},
          deleted_splits: [],
        },
        vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
      };
      await fx.blobs.put(extractedBlobKey(ids), JSON.stringify(data));
      await fx.bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: extractedBlobKey(ids) });
    }
    await eventually(
      async () => {
        const r = await fx.bus.request(ContentSubjects.processingRequest, { kbids: [kb], processing_id: ids.processing_id });
        return r.completed ? true : undefined;
      },
      15_000,
      'the job to complete',
    );
    return { rid: uuid, processingId: ids.processing_id };
  };

  interface PulledDoc {
    [member: string]: unknown;
    extracted: { text: { text: string } } | null;
  }
  const pull = (req: Partial<ProcessingPullRequest>): Promise<ProcessingPullResult> =>
    fx.bus.request(ContentSubjects.processingPull, { kbids: [kbid], mode: 'v1', consumer: 'client-1', limit: 10, partitions: 1, ...req });
  const docs = (res: ProcessingPullResult) =>
    res.messages.map((m) => JSON.parse(Buffer.from(m.payload, 'base64').toString('utf8')) as PulledDoc);

  it('v1: delivers completed jobs in completion order from a cursor, with their extracted data, and only of the given KBs', async () => {
    const a = await processed('Alpha text about tides.');
    const b = await processed('Beta text about waves.', { error: true });
    await processed('Gamma in another KB.', { kb: otherKb });
    const c = await processed('Gamma text about currents.');

    const first = await pull({ limit: 2 });
    expect(first.messages.map((m) => m.processing_id)).toEqual([a.processingId, b.processingId]);
    expect(first.messages[0]?.seq).toBeLessThan(first.messages[1]?.seq ?? 0);
    expect(first.cursor).toBe(first.messages[1]?.seq);
    expect(first.pending).toBe(1);
    const [docA, docB] = docs(first);
    expect(docA).toMatchObject({
      processing_id: a.processingId,
      kbid,
      resource_id: a.rid,
      field: { type: 'text', id: 'body' },
      status: 'PROCESSED',
      error: null,
    });
    expect(docA?.extracted?.text.text).toBe('Alpha text about tides.');
    expect(docB).toMatchObject({
      status: 'ERROR',
      retries: 2,
      extracted: null,
      error: { code_str: 'CORRUPT_FILE', body: 'The file is corrupt' },
    });

    const second = await pull({ from_cursor: first.cursor });
    expect(second.messages.map((m) => m.processing_id)).toEqual([c.processingId]);
    const empty = await pull({ from_cursor: second.cursor });
    expect(empty).toEqual({ messages: [], cursor: second.cursor, pending: 0 });

    // A job completed after the pull comes after the cursor: cursors never skip one.
    const d = await processed('Delta text about harbours.');
    expect((await pull({ from_cursor: second.cursor })).messages.map((m) => m.processing_id)).toEqual([d.processingId]);
    expect((await pull({ kbids: [] })).messages).toEqual([]);
  });

  it('records processed and indexed audit events with the usage of the field', async () => {
    const events: AuditRecordedEvent[] = [];
    await fx.bus.subscribe(ContentSubjects.auditRecorded, async (e) => void events.push(e));
    const done = await processed('Usage counts one paragraph of text.');
    await eventually(
      async () =>
        events.filter((e) => e.resource_id === done.rid && (e.type === 'processed' || e.type === 'indexed')).length >= 2 ? true : undefined,
      10_000,
      'the events',
    );
    const mine = events.filter((e) => e.resource_id === done.rid);
    // The result's JSON is what the field now holds in the store (storage_bytes), sized by the store.
    let stored = 0;
    for await (const item of fx.blobs.list(`content/kbs/${kbid}/r/${done.rid}/`)) stored += item.size;
    expect(stored).toBeGreaterThan(0);
    expect(mine.find((e) => e.type === 'processed')?.audit_metadata).toEqual({
      processing_id: done.processingId,
      field: 'text/body',
      status: 'PROCESSED',
      bytes: stored,
      usage: {
        paragraphs: 1,
        characters: 'Usage counts one paragraph of text.'.length,
        pages: 0,
        media_seconds: 0,
        documents: 1,
        media: false,
        processing_seconds: expect.any(Number),
      },
    });
    expect(mine.find((e) => e.type === 'indexed')?.audit_metadata).toEqual({
      processing_id: done.processingId,
      field: 'text/body',
      paragraphs: 1,
    });
  });

  it('v1: partitions split the stream by resource, disjoint and complete', async () => {
    const all = (await pull({ limit: 50 })).messages.map((m) => m.processing_id);
    const p0 = (await pull({ limit: 50, partitions: 2, partition: 1 })).messages.map((m) => m.processing_id);
    const p1 = (await pull({ limit: 50, partitions: 2, partition: 2 })).messages.map((m) => m.processing_id);
    expect([...p0, ...p1].sort()).toEqual([...all].sort());
    expect(p0.filter((id) => p1.includes(id))).toEqual([]);
    await expect(pull({ partitions: 2, partition: 3 })).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
  });

  it("v2: keeps each client's acknowledged position, leases deliveries, and redelivers only what was not acknowledged", async () => {
    const v2 = (req: Partial<ProcessingPullRequest> = {}) => pull({ mode: 'v2', consumer: 'client-v2', limit: 2, ttl_s: 60, ...req });
    const total = (await pull({ limit: 50 })).messages.length;
    expect(total).toBeGreaterThanOrEqual(4);

    const first = await v2();
    expect(first.messages).toHaveLength(2);
    // While the lease runs, the next pull continues after what was delivered.
    const second = await v2();
    expect(second.messages[0]?.seq).toBeGreaterThan(first.messages[1]?.seq ?? 0);
    // Another client has its own position.
    expect((await v2({ consumer: 'client-other' })).messages.map((m) => m.seq)).toEqual(first.messages.map((m) => m.seq));

    // The lease ends with only the first message acknowledged: delivery resumes after it.
    await fx.ds.query(
      `UPDATE content.processing_pull_consumers SET lease_until = now() - interval '1 second' WHERE consumer = 'client-v2'`,
    );
    const again = await v2({ ack: [first.messages[0]?.ack_token ?? ''] });
    expect(again.messages.map((m) => m.seq)).toEqual([first.messages[1]?.seq, second.messages[0]?.seq]);

    // Acknowledging the last delivered one acknowledges those before it; nothing comes twice after that.
    const lastSeen = again.messages[1]?.ack_token ?? '';
    const rest: number[] = [];
    let res = await v2({ ack: [lastSeen], limit: 50 });
    rest.push(...res.messages.map((m) => m.seq));
    res = await v2({ ack: res.messages.map((m) => m.ack_token), limit: 50 });
    expect(res.messages).toEqual([]);
    expect(rest.every((s) => s > Number(lastSeen))).toBe(true);
    await fx.ds.query(
      `UPDATE content.processing_pull_consumers SET lease_until = now() - interval '1 second' WHERE consumer = 'client-v2'`,
    );
    expect((await v2({ limit: 50 })).messages).toEqual([]);

    // An ack beyond what was delivered is ignored; a malformed one is a 422.
    await processed('Epsilon text.');
    await v2({ ack: ['999999999'] });
    await fx.ds.query(
      `UPDATE content.processing_pull_consumers SET lease_until = now() - interval '1 second' WHERE consumer = 'client-v2'`,
    );
    expect((await v2()).messages).toHaveLength(1);
    await expect(v2({ ack: ['not-a-token'] })).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
  });
});
