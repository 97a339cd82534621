import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  ContentSubjects,
  UnderstandingSubjects,
  extractedBlobKey,
  fieldBlobPrefix,
  fileBlobKey,
  stagedImportKey,
  type AuditRecordedEvent,
  type ExtractedFieldData,
  type ProcessFieldJob,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { BlobStore } from '@kb/platform/storage';
import { eventually } from '@kb/platform/testing';
import { startContentHarness, type ContentHarness } from './fixtures/content-harness';
import { KbImporter } from '../src/transfer/kb-importer';
import { KbTransfersService } from '../src/transfer/kb-transfers.service';

/**
 * An import meters what it adds (docs/usage.md, docs/export-format.md): one `new` event per
 * resource with the bytes its stored files take, so the signed bytes of a KB's events equal what
 * the store holds under its resources — after an import, after an import retried once its first
 * attempt died part-way (counted once), and after the imported resources are deleted (0).
 */
describe('import metering (PGlite, in-process bus, fs blobs)', () => {
  let harness: ContentHarness | undefined;
  let ds: DataSource;
  let bus: MessageBus;
  let blobs: BlobStore;
  let app: INestApplication;
  let transfers: KbTransfersService;
  const jobs: ProcessFieldJob[] = [];
  const audit: AuditRecordedEvent[] = [];
  const source = randomUUID();

  beforeAll(async () => {
    harness = await startContentHarness({ options: { transferPollMs: 0 } });
    ({ ds, bus, blobs, app } = harness);
    transfers = app.get(KbTransfersService);
    await bus.consume(UnderstandingSubjects.processField, async (job) => void jobs.push(job), { durable: 'test-jobs' });
    await bus.subscribe(ContentSubjects.auditRecorded, async (e) => void audit.push(e), { durable: 'test-audit' });
  }, 180_000);

  afterAll(async () => {
    await harness?.close();
  });

  const jobFor = (rid: string, field: string) =>
    eventually(async () => jobs.find((j) => j.rid === rid && j.field_id === field), 5000, `job of ${field}`);
  const events = (kbid: string) => audit.filter((e) => e.kbid === kbid);
  /** What a KB's events say it holds, and how many resources. */
  const metered = (kbid: string) => events(kbid).reduce((n, e) => n + Number(e.audit_metadata?.['bytes'] ?? 0), 0);
  const resources = (kbid: string) => events(kbid).reduce((n, e) => n + (e.type === 'new' ? 1 : e.type === 'deleted' ? -1 : 0), 0);
  const inStore = async (kbid: string) => {
    let total = 0;
    for await (const item of blobs.list(`content/kbs/${kbid}/r/`)) total += item.size;
    return total;
  };
  const settled = async (kbid: string, expected: { bytes: number; resources: number }) =>
    eventually(
      async () => {
        const held = await inStore(kbid);
        return held === metered(kbid) && held === expected.bytes && resources(kbid) === expected.resources ? held : undefined;
      },
      8000,
      'the metered bytes and resources to equal the store',
    ).catch(async () => {
      throw new Error(
        `metered ${metered(kbid)} bytes and ${resources(kbid)} resources, the store holds ${await inStore(kbid)} (expected ${JSON.stringify(expected)})`,
      );
    });

  /** A worker storing the extracted JSON and (optionally) a thumbnail, reporting their sizes. */
  const work = async (job: ProcessFieldJob, text: string, thumbnail?: number) => {
    const ids = {
      processing_id: job.processing_id,
      kbid: job.kbid,
      rid: job.rid,
      field_type: job.field_type,
      field_id: job.field_id,
      seqid: job.seqid,
    };
    const stored: Record<string, number> = {};
    const thumb = `${fieldBlobPrefix(ids)}thumbnail`;
    if (thumbnail !== undefined) stored[thumb] = (await blobs.put(thumb, Buffer.alloc(thumbnail, 7))).size;
    const data: ExtractedFieldData = {
      text: { text, split_text: {}, deleted_splits: [] },
      metadata: {
        metadata: { paragraphs: [{ start: 0, end: text.length, kind: 'TEXT', sentences: [] }] },
        split_metadata: {},
        deleted_splits: [],
      },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
      ...(thumbnail !== undefined ? { file: { file_thumbnail: { uri: `blob:${thumb}`, size: thumbnail } } } : {}),
    };
    const key = extractedBlobKey(ids);
    stored[key] = (await blobs.put(key, JSON.stringify(data))).size;
    await bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: key, stored_bytes: stored });
  };

  const upload = async (rid: string, bytes: number) => {
    const key = fileBlobKey(source, rid, 'doc');
    const size = (await blobs.put(key, Buffer.alloc(bytes, 1), { contentType: 'application/pdf' })).size;
    await bus.request(ContentSubjects.registerUpload, {
      kbid: source,
      rid,
      create: true,
      field_id: 'doc',
      // The size a forged archive could claim is never taken: the import measures what it stores.
      file: { uri: `blob:${key}`, filename: 'a.pdf', content_type: 'application/pdf', size, md5: 'a'.repeat(32) },
    });
  };

  let archive: string;

  beforeAll(async () => {
    // The source: two uploaded files (one processed with a thumbnail) and a text.
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await upload(a, 3000);
    await work(await jobFor(a, 'doc'), 'first file', 500);
    await upload(b, 1200);
    await work(await jobFor(b, 'doc'), 'second file');
    await bus.request(ContentSubjects.createResource, {
      kbid: source,
      rid: c,
      body: { slug: 'note', texts: { body: { body: 'A note.' } } },
    });
    await work(await jobFor(c, 'body'), 'A note.');
    await eventually(
      async () =>
        (await ds.query(`SELECT count(*)::int AS n FROM content.fields WHERE kbid = $1 AND status = 'PROCESSED'`, [source]))[0].n === 3
          ? true
          : undefined,
      8000,
      'the source processed',
    );
    const { export_id } = await bus.request(ContentSubjects.startKbExport, { kbid: source, kb_config: { slug: 'src', title: 'Source' } });
    await transfers.drain();
    archive = (await bus.request(ContentSubjects.kbExportFile, { kbid: source, id: export_id })).blob_key;
  }, 120_000);

  const startImport = async (kbid: string) => {
    const importId = randomUUID();
    await blobs.copy(archive, stagedImportKey(importId));
    await bus.request(ContentSubjects.startKbImport, { kbid, import_id: importId, max_blob_bytes: -1, size_bytes: 1000 });
    return importId;
  };
  const deleteAll = async (kbid: string) => {
    const rows = (await ds.query(`SELECT id FROM content.resources WHERE kbid = $1`, [kbid])) as { id: string }[];
    for (const r of rows) await bus.request(ContentSubjects.deleteResource, { kbid, rid: r.id });
  };
  // The files and the thumbnail are copied; extracted JSON is not (the field rows hold it).
  const imported = { bytes: 3000 + 500 + 1200, resources: 3 };

  it('an import meters its resources and the bytes of the files it stores; deleting them returns to 0', async () => {
    const target = randomUUID();
    const importId = await startImport(target);
    await transfers.drain();
    expect(await bus.request(ContentSubjects.kbImportStatus, { kbid: target, id: importId })).toMatchObject({
      status: 'finished',
      retries: 0,
    });
    await settled(target, imported);
    expect(events(target).filter((e) => e.type === 'new')).toHaveLength(3);
    // The thumbnail is the field's artefact: recorded, so a reprocess replaces it and a deletion subtracts it.
    const [field] = (await ds.query(`SELECT f.artefacts, f.value FROM content.fields f WHERE f.kbid = $1 AND f.artefacts <> '{}'::jsonb`, [
      target,
    ])) as { artefacts: Record<string, number>; value: { file: { size: number } } }[];
    expect(Object.values(field?.artefacts ?? {})).toEqual([500]);
    expect(field?.value.file.size).toBe(3000);

    await deleteAll(target);
    await settled(target, { bytes: 0, resources: 0 });
  }, 60_000);

  it('an import retried after its first attempt died part-way is counted once', async () => {
    const target = randomUUID();
    const importer = app.get(KbImporter);
    // The first attempt dies storing the second resource's first file: one resource written (and
    // metered), another staged with nothing stored. A crash skips the failure's own undo; the
    // retry undoes the attempt first.
    const put = blobs.put.bind(blobs);
    const seen = new Set<string>();
    const spyPut = jest.spyOn(blobs, 'put').mockImplementation(async (key, ...rest) => {
      const rid = key.startsWith(`content/kbs/${target}/r/`) ? key.split('/')[4] : undefined;
      if (rid && !seen.has(rid)) {
        seen.add(rid);
        if (seen.size === 2) throw new Error('the process died');
      }
      return put(key, ...rest);
    });
    const spyUndo = jest.spyOn(importer, 'undo').mockResolvedValueOnce(undefined);
    try {
      const importId = await startImport(target);
      await transfers.drain();
      expect(await bus.request(ContentSubjects.kbImportStatus, { kbid: target, id: importId })).toMatchObject({
        status: 'finished',
        retries: 1,
      });
      expect(spyUndo).toHaveBeenCalledTimes(2);
    } finally {
      spyPut.mockRestore();
      spyUndo.mockRestore();
    }
    // The first attempt's resource was metered, then subtracted by the retry's undo.
    expect(events(target).filter((e) => e.type === 'deleted')).toHaveLength(1);
    await settled(target, imported);
    await deleteAll(target);
    await settled(target, { bytes: 0, resources: 0 });
  }, 60_000);
});
