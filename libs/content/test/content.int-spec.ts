import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  AccountsSubjects,
  ContentSubjects,
  DomainError,
  ErrorCodes,
  UnderstandingSubjects,
  extractedBlobKey,
  type ExtractedFieldData,
  type ProcessFieldJob,
  type QueueDef,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { BlobStore } from '@kb/platform/storage';
import { eventually } from '@kb/platform/testing';
import { startContentHarness, type ContentHarness } from './fixtures/content-harness';
import { KbCleanupService } from '../src/kbs/kb-cleanup.service';

/** A bus whose enqueues fail while `failing` is set, to prove the outbox retries. */
function flaky(bus: MessageBus, state: { failing: boolean }): MessageBus {
  return new Proxy(bus, {
    get(target, prop, receiver) {
      if (prop === 'enqueue') {
        return async (def: QueueDef<unknown>, payload: unknown, options?: unknown) => {
          if (state.failing) throw new Error('bus down');
          return target.enqueue(def, payload, options as never);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('content service (real PostgreSQL, in-process bus, fs blobs)', () => {
  let harness: ContentHarness | undefined;
  let ds: DataSource;
  let bus: MessageBus;
  let blobs: BlobStore;
  let app: INestApplication;
  const jobs: ProcessFieldJob[] = [];
  const busState = { failing: false };
  const kbid = '00000000-0000-4000-8000-000000000001';

  beforeAll(async () => {
    harness = await startContentHarness({ wrapBus: (inner) => flaky(inner, busState) });
    ({ ds, bus, blobs, app } = harness);
    await bus.consume(UnderstandingSubjects.processField, async (job) => void jobs.push(job), { durable: 'test-jobs' });
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
  });

  const create = (body: Record<string, unknown>) => bus.request(ContentSubjects.createResource, { kbid, body });
  const get = (rid: string) => bus.request(ContentSubjects.getResource, { kbid, rid, show: ['basic', 'values', 'errors'] });

  it('submits one processing job per field, after the commit', async () => {
    const { uuid } = await create({ title: 'Jobs', texts: { a: { body: 'A' }, b: { body: 'B' } } });
    const mine = await eventually(async () => {
      const found = jobs.filter((j) => j.rid === uuid);
      return found.length === 2 ? found : undefined;
    });
    expect(mine.map((j) => j.field_id).sort()).toEqual(['a', 'b']);
  });

  it('concurrent modifications of one resource keep every field and raise last_seqid', async () => {
    const { uuid, seqid } = await create({ title: 'Concurrent' });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        bus.request(ContentSubjects.modifyResource, { kbid, rid: uuid, body: { texts: { [`f${i}`]: { body: `text ${i}` } } } }),
      ),
    );
    const seqids = results.map((r) => r.seqid);
    expect(new Set(seqids).size).toBe(12);
    const resource = await get(uuid);
    expect(Object.keys(resource.data?.texts ?? {}).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `f${i}`).sort());
    expect(resource.last_seqid).toBe(Math.max(...seqids));
    expect(resource.last_seqid).toBeGreaterThan(seqid);
  });

  it('applies a processing result once, and ignores one for an older write', async () => {
    const { uuid } = await create({ title: 'Results', texts: { body: { body: 'old' } } });
    const first = await eventually(async () => jobs.find((j) => j.rid === uuid));
    const { seqid: newer } = await bus.request(ContentSubjects.modifyResource, {
      kbid,
      rid: uuid,
      body: { texts: { body: { body: 'new text' } } },
    });
    // The worker writes the extracted data to the blob store and sends only its key.
    const result = async (seqid: number, text: string) => {
      const ids = { processing_id: `p-${seqid}`, kbid, rid: uuid, field_type: 'text' as const, field_id: 'body', seqid };
      const data: ExtractedFieldData = {
        text: { text, split_text: {}, deleted_splits: [] },
        metadata: {
          metadata: { paragraphs: [{ start: 0, end: text.length, kind: 'TEXT', sentences: [] }], language: 'en' },
          split_metadata: {},
          deleted_splits: [],
        },
        vectors: {
          vectors: { vectors: [{ start: 0, end: text.length, start_paragraph: 0, end_paragraph: text.length, vector: [0.6, 0.8] }] },
          split_vectors: {},
          deleted_splits: [],
        },
      };
      await blobs.put(extractedBlobKey(ids), JSON.stringify(data));
      return { ...ids, extracted_key: extractedBlobKey(ids) };
    };
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, await result(first.seqid, 'old'));
    await new Promise((r) => setTimeout(r, 300));
    expect((await get(uuid)).metadata?.['status']).toBe('PENDING');
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, await result(newer, 'new text'));
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, await result(newer, 'new text'));
    const done = await eventually(async () => {
      const r = await get(uuid);
      return r.metadata?.['status'] === 'PROCESSED' ? r : undefined;
    });
    expect(done.data?.texts?.['body']?.status).toBe('PROCESSED');
    expect(done.metadata?.['language']).toBe('en');
    const read = (extracted: ('text' | 'metadata' | 'vectors')[]) =>
      bus.request(ContentSubjects.getResource, { kbid, rid: uuid, show: ['extracted'], extracted });
    const plain = (await read(['text', 'metadata'])).data?.texts?.['body']?.extracted as Record<string, { text?: string }> | undefined;
    expect(plain?.['text']?.text).toBe('new text');
    expect(plain?.['vectors']).toBeUndefined();
    const withVectors = (await read(['vectors'])).data?.texts?.['body']?.extracted as ExtractedFieldData | undefined;
    expect(Object.keys(withVectors ?? {})).toEqual(['vectors']);
    expect(withVectors?.vectors.vectors.vectors[0]?.vector).toEqual([0.6, 0.8]);
    // The applied result stays as the field's artefact; the older write's result is pruned.
    const ids = { kbid, rid: uuid, field_type: 'text', field_id: 'body' };
    expect(await blobs.exists(extractedBlobKey({ ...ids, seqid: newer }))).toBe(true);
    await eventually(async () => !(await blobs.exists(extractedBlobKey({ ...ids, seqid: first.seqid }))) || undefined);
  });

  it('a result delivered again after it was applied changes nothing and is counted once', async () => {
    const events: { type: string; resource_id?: string; audit_metadata?: Record<string, unknown> }[] = [];
    await bus.subscribe(ContentSubjects.auditRecorded, async (e) => void events.push(e), { durable: 'test-audit-once' });
    const { uuid } = await create({ title: 'Once', texts: { body: { body: 'Counted once.' } } });
    const job = await eventually(async () => jobs.find((j) => j.rid === uuid));
    const ids = { processing_id: job.processing_id, kbid, rid: uuid, field_type: 'text' as const, field_id: 'body', seqid: job.seqid };
    const data: ExtractedFieldData = {
      text: { text: 'Counted once.', split_text: {}, deleted_splits: [] },
      metadata: {
        metadata: { paragraphs: [{ start: 0, end: 13, kind: 'TEXT', sentences: [] }], language: 'en' },
        split_metadata: {},
        deleted_splits: [],
      },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    };
    await blobs.put(extractedBlobKey(ids), JSON.stringify(data));
    // The same result twice, as after a crash between the apply's commit and its ack.
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: extractedBlobKey(ids) });
    await eventually(async () => ((await get(uuid)).metadata?.['status'] === 'PROCESSED' ? true : undefined));
    const mine = (type: string) => events.filter((e) => e.type === type && e.resource_id === uuid);
    await eventually(async () => (mine('processed').length === 1 && mine('indexed').length === 1 ? true : undefined));
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: extractedBlobKey(ids) });
    // A marker written after the repeat: once its event is in, the repeat has been handled.
    const { uuid: marker } = await create({ title: 'Marker' });
    await eventually(async () => (events.some((e) => e.type === 'new' && e.resource_id === marker) ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(mine('processed').map((e) => e.audit_metadata?.['processing_id'])).toEqual([job.processing_id]);
    expect(mine('indexed')).toHaveLength(1);
  });

  it('a result that arrives after its resource was deleted leaves no blob behind', async () => {
    const { uuid } = await create({ title: 'Gone before processed', texts: { body: { body: 'text' } } });
    const job = await eventually(async () => jobs.find((j) => j.rid === uuid));
    await bus.request(ContentSubjects.deleteResource, { kbid, rid: uuid });
    // The worker, still busy with the job, writes its result after the resource's blobs were deleted.
    const ids = { processing_id: 'p-late', kbid, rid: uuid, field_type: 'text' as const, field_id: 'body', seqid: job.seqid };
    const key = extractedBlobKey(ids);
    await eventually(
      async () => {
        const left: { n: string }[] = await ds.query(
          `SELECT count(*) AS n FROM content.outbox WHERE kind = 'blob_cleanup' AND target LIKE $1`,
          [`%${uuid}%`],
        );
        return Number(left[0]?.n) === 0 ? true : undefined;
      },
      5000,
      'the resource cleanup to be carried out',
    );
    const data: ExtractedFieldData = {
      text: { text: 'text', split_text: {}, deleted_splits: [] },
      metadata: {
        metadata: { paragraphs: [{ start: 0, end: 4, kind: 'TEXT', sentences: [] }], language: 'en' },
        split_metadata: {},
        deleted_splits: [],
      },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    };
    await blobs.put(key, JSON.stringify(data));
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: key });
    await eventually(async () => ((await blobs.exists(key)) ? undefined : true), 5000, "the late result's blob to be deleted");
    await expect(get(uuid)).rejects.toBeInstanceOf(DomainError);
    await eventually(
      async () => {
        const left: { n: string }[] = await ds.query(
          `SELECT count(*) AS n FROM content.outbox WHERE kind = 'blob_cleanup' AND target LIKE $1`,
          [`%${uuid}%`],
        );
        return Number(left[0]?.n) === 0 ? true : undefined;
      },
      5000,
      'the cleanup row to be removed once carried out',
    );
  });

  it('a processing error marks the field and the resource ERROR with the error record', async () => {
    const { uuid } = await create({ title: 'Broken', texts: { body: { body: 'x' } } });
    const job = await eventually(async () => jobs.find((j) => j.rid === uuid));
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, {
      ...job,
      error: { body: 'cannot read', code: 500, code_str: 'PROCESSING_FAILED' },
    });
    const failed = await eventually(async () => {
      const r = await get(uuid);
      return r.metadata?.['status'] === 'ERROR' ? r : undefined;
    });
    expect(failed.data?.texts?.['body']?.error).toEqual({
      body: 'cannot read',
      code: 500,
      code_str: 'PROCESSING_FAILED',
      created: expect.any(String),
    });
    expect(failed.data?.texts?.['body']?.errors).toHaveLength(1);
  });

  it('a job whose relay failed is sent by the outbox sweep: nothing is dropped', async () => {
    busState.failing = true;
    const { uuid } = await create({ title: 'Outbox', texts: { body: { body: 'later' } } });
    await new Promise((r) => setTimeout(r, 150));
    expect(jobs.find((j) => j.rid === uuid)).toBeUndefined();
    const pending: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM content.outbox WHERE payload->>'rid' = $1`, [uuid]);
    expect(Number(pending[0]?.n)).toBe(1);
    busState.failing = false;
    await eventually(async () => jobs.find((j) => j.rid === uuid), 5000, 'the outbox to relay the job');
    await eventually(async () => {
      const left: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM content.outbox WHERE payload->>'rid' = $1`, [uuid]);
      return Number(left[0]?.n) === 0 ? true : undefined;
    });
  });

  it('a slug taken in the KB is a conflict and leaves nothing behind', async () => {
    await create({ title: 'One', slug: 'taken' });
    const before: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM content.resources WHERE kbid = $1`, [kbid]);
    await expect(create({ title: 'Two', slug: 'taken', texts: { body: { body: 'x' } } })).rejects.toMatchObject({
      code: ErrorCodes.SLUG_CONFLICT,
    });
    const after: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM content.resources WHERE kbid = $1`, [kbid]);
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  it('deleting a resource deletes its blobs; deleting the KB deletes everything of it', async () => {
    const { uuid } = await create({ title: 'With blobs' });
    await blobs.put(`content/kbs/${kbid}/r/${uuid}/f/doc/original`, Buffer.from('bytes'));
    await blobs.put(`content/kbs/${kbid}/r/other/f/doc/original`, Buffer.from('bytes'));
    await bus.request(ContentSubjects.deleteResource, { kbid, rid: uuid });
    await expect(get(uuid)).rejects.toBeInstanceOf(DomainError);
    // The blob cleanup is committed with the delete and carried out right after it, in the background.
    await eventually(
      async () => ((await blobs.exists(`content/kbs/${kbid}/r/${uuid}/f/doc/original`)) ? undefined : true),
      5000,
      'the blob cleanup',
    );
    await eventually(
      async () => {
        const left: { n: string }[] = await ds.query(
          `SELECT count(*) AS n FROM content.outbox WHERE kind = 'blob_cleanup' AND target LIKE $1`,
          [`%${uuid}%`],
        );
        return Number(left[0]?.n) === 0 ? true : undefined;
      },
      5000,
      'the cleanup row to be removed once carried out',
    );
    expect(await blobs.exists(`content/kbs/${kbid}/r/other/f/doc/original`)).toBe(true);

    await bus.publish(AccountsSubjects.kbDeleted, { account_id: 'a', kb_id: kbid });
    await eventually(async () => ((await bus.request(ContentSubjects.countResources, { kbid })).resources === 0 ? true : undefined));
    await eventually(async () => ((await blobs.exists(`content/kbs/${kbid}/r/other/f/doc/original`)) ? undefined : true));
  });

  it('handling kbDeleted again (delivery is at least once) succeeds and leaves the KB empty', async () => {
    const other = '00000000-0000-4000-8000-0000000000d2';
    await bus.request(ContentSubjects.createResource, { kbid: other, body: { title: 'Gone twice' } });
    expect((await bus.request(ContentSubjects.countResources, { kbid: other })).resources).toBe(1);
    await blobs.put(`content/kbs/${other}/r/x/f/doc/original`, Buffer.from('bytes'));
    await bus.request(ContentSubjects.setLabelSet, { kbid: other, labelset: 'topic', body: { labels: [{ title: 'ice' }] } });
    await ds.query(
      `INSERT INTO content.webhook_deliveries (id, processing_id, kbid, event, uri) VALUES (gen_random_uuid(), 'p1', $1, 'processed', 'https://example.com/hook')`,
      [other],
    );
    const cleanup = app.get(KbCleanupService);
    await cleanup.onKbDeleted({ account_id: 'a', kb_id: other });
    await expect(cleanup.onKbDeleted({ account_id: 'a', kb_id: other })).resolves.toBeUndefined();
    expect((await bus.request(ContentSubjects.countResources, { kbid: other })).resources).toBe(0);
    expect(await blobs.exists(`content/kbs/${other}/r/x/f/doc/original`)).toBe(false);
    // Every table of the content schema that names a KB is empty for it (a new table must be cleaned
    // too): only the account's backups outlive their KB.
    const tables: { table_name: string }[] = await ds.query(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'content' AND column_name = 'kbid'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['labelsets', 'webhook_deliveries', 'resources']));
    for (const { table_name } of tables) {
      const kept = table_name === 'kb_transfers' ? ` AND kind <> 'backup'` : '';
      const left: { n: string }[] = await ds.query(`SELECT count(*) AS n FROM content.${table_name} WHERE kbid = $1${kept}`, [other]);
      expect({ table: table_name, rows: Number(left[0]?.n) }).toEqual({ table: table_name, rows: 0 });
    }
  });
});
