import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractedBlobKey, type FieldProcessedResult, type ProcessFieldJob } from '@kb/contracts';
import type { DeliveryMeta, MessageBus } from '@kb/platform/messaging';
import { createLogger } from '@kb/platform/observability';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { textAnalysisWarm } from './analysis';
import { ExtractionError } from './extractors';
import type { FieldOutcome, FieldProcessorService } from './field-processor.service';
import { ProcessingWorkerService } from './processing-worker.service';

describe('ProcessingWorkerService', () => {
  let blobRoot: string;
  let blobs: BlobStore;
  const sent: FieldProcessedResult[] = [];
  // Only enqueue is used by handle(); the rest of the bus is irrelevant here.
  const bus = { enqueue: async (_def: unknown, payload: FieldProcessedResult) => void sent.push(payload) } as unknown as MessageBus;
  const job: ProcessFieldJob = {
    processing_id: 'p-9',
    kbid: 'kb-1',
    rid: 'r-1',
    field_type: 'text',
    field_id: 'body',
    seqid: 4,
    value: { body: 'x' },
  };
  const meta = (deliveryCount: number) => ({ id: 'm', subject: 's', deliveryCount, context: {} }) as DeliveryMeta;
  const worker = (process: () => Promise<FieldOutcome>) =>
    new ProcessingWorkerService(
      bus,
      { consumeJobs: false, concurrency: 1, maxAttempts: 3 },
      createLogger({ service: 't', level: 'silent' }),
      { process } as unknown as FieldProcessorService,
      blobs,
    );

  beforeAll(async () => {
    blobRoot = mkdtempSync(join(tmpdir(), 'kb-worker-'));
    blobs = await createBlobStore({ driver: 'fs', root: blobRoot, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
  });
  afterAll(async () => {
    await blobs.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });
  beforeEach(() => void (sent.length = 0));

  it('writes the extracted data to the blob store and publishes its key with the bytes stored', async () => {
    const thumbnail = 'content/kbs/kb-1/r/r-1/f/text/body/thumbnail';
    const extracted = {
      text: { text: 'x', split_text: {}, deleted_splits: [] },
      metadata: { metadata: { thumbnail: { uri: `blob:${thumbnail}`, size: 321 } }, split_metadata: {}, deleted_splits: [] },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
      // Another field's file is not this result's.
      file: {
        file_thumbnail: { uri: `blob:${thumbnail}`, size: 321 },
        other: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/x/original', size: 9 },
      },
    };
    await worker(async () => ({ extracted })).handle(job, meta(1));
    const key = extractedBlobKey(job);
    expect(key).toBe('content/kbs/kb-1/r/r-1/f/text/body/extracted/4.json');
    const stored = (await blobs.stat(key))?.size;
    expect(stored).toBe(Buffer.byteLength(JSON.stringify(extracted)));
    expect(sent).toEqual([
      {
        processing_id: 'p-9',
        kbid: 'kb-1',
        rid: 'r-1',
        field_type: 'text',
        field_id: 'body',
        seqid: 4,
        extracted_key: key,
        stored_bytes: { [key]: stored, [thumbnail]: 321 },
        retries: 0,
      },
    ]);
    const body = (await blobs.get(key)).body;
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual(extracted);
  });

  it('a field error is published as is', async () => {
    await worker(async () => ({ error: { body: 'nope', code: 415, code_str: 'UNSUPPORTED_TYPE' } })).handle(job, meta(1));
    expect(sent[0]).toMatchObject({ error: { code_str: 'UNSUPPORTED_TYPE' } });
    expect(sent[0]?.extracted_key).toBeUndefined();
  });

  it('a transient failure is retried, and the last attempt keeps its code', async () => {
    const failing = worker(async () => {
      throw new ExtractionError('Fetching answered 503', 'FETCH_FAILED');
    });
    await expect(failing.handle(job, meta(1))).rejects.toThrow('503');
    expect(sent).toEqual([]);
    await failing.handle(job, meta(3));
    expect(sent[0]?.error).toEqual({ body: expect.stringContaining('503'), code: 502, code_str: 'FETCH_FAILED' });
    expect(sent[0]?.retries).toBe(2); // the third delivery gave up: two retries before it
  });
  it('logs one line per job it finished, with the job and the attempt (what tells a job done twice)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ service: 't', level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    const extracted = { text: { text: 'x', split_text: {}, deleted_splits: [] } };
    const w = new ProcessingWorkerService(
      bus,
      { consumeJobs: false, concurrency: 1, maxAttempts: 3 },
      logger,
      { process: async () => ({ extracted }) } as unknown as FieldProcessorService,
      blobs,
    );
    await w.handle(job, meta(2));
    const failing = new ProcessingWorkerService(
      bus,
      { consumeJobs: false, concurrency: 1, maxAttempts: 1 },
      logger,
      { process: async () => Promise.reject(new Error('boom')) } as unknown as FieldProcessorService,
      blobs,
    );
    await failing.handle({ ...job, processing_id: 'p-10' }, meta(1));
    expect(lines.filter((l) => l['msg'] === 'processing job done')).toEqual([
      expect.objectContaining({ processing_id: 'p-9', kbid: 'kb-1', rid: 'r-1', attempt: 2, outcome: 'processed' }),
      expect.objectContaining({ processing_id: 'p-10', attempt: 1, outcome: 'failed' }),
    ]);
  });

  it('loads the text analysis models before it takes any job', async () => {
    // Nothing in this file analysed text yet: the models are not loaded.
    expect(textAnalysisWarm()).toBe(false);
    let warmAtConsume: boolean | undefined;
    const consuming = {
      consume: async () => void (warmAtConsume = textAnalysisWarm()),
    } as unknown as MessageBus;
    const w = new ProcessingWorkerService(
      consuming,
      { consumeJobs: true, concurrency: 1, maxAttempts: 3 },
      createLogger({ service: 't', level: 'silent' }),
      { process: async () => ({ error: { body: 'x', code: 500, code_str: 'X' } }) } as unknown as FieldProcessorService,
      blobs,
    );
    await w.onModuleInit();
    expect(warmAtConsume).toBe(true);
  });
});
