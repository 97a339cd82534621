import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { AccountsSubjects, ErrorCodes, PROCESSING_UPLOAD_TOKEN, processingUploadKey, type AnyDef } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { ProcessingUploadService } from './processing-upload.service';
import { StagedUploadsSweeper } from './staged-uploads.sweeper';
import { TusService } from './tus.service';
import { UploadService } from './upload.service';

const ACCOUNT = 'acc-1';
const context = { request_id: 'r-1' } as never;

function fakeBus(limit = 1000): MessageBus {
  return {
    request: async (def: AnyDef) => {
      if (def.subject === AccountsSubjects.accountUploadLimits.subject || def.subject === AccountsSubjects.kbUploadLimits.subject)
        return { upload_limit_max_media_file_size: limit * 10, upload_limit_max_non_media_file_size: limit };
      throw new Error(`unexpected ${def.subject}`);
    },
  } as unknown as MessageBus;
}

async function all(blobs: BlobStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const item of blobs.list(prefix)) out.push(item.key);
  return out;
}

/** Ages every object stored so far by `ms` (the fs driver reports file mtimes). */
function age(root: string, ms: number): void {
  const when = new Date(Date.now() - ms);
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else utimesSync(path, when, when);
    }
  };
  walk(root);
}

describe('Upload Binary File (ProcessingUploadService) and the sweep of unused uploads', () => {
  let root: string;
  let blobs: BlobStore;
  let uploads: ProcessingUploadService;

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'kb-processing-uploads-'));
    blobs = await createBlobStore({ driver: 'fs', root, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
    uploads = new ProcessingUploadService(fakeBus(), blobs);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stages the bytes under the account with the upload headers, and answers an unguessable token', async () => {
    const token = await uploads.stage({
      accountId: ACCOUNT,
      body: Readable.from([Buffer.from('hello '), Buffer.from('world')]),
      filename: 'notes.txt',
      password: 'pw',
      language: 'en',
      md5: '5EB63BBBE01EEED093CB22BB8F5ACDC3',
      context,
    });
    expect(token).toMatch(PROCESSING_UPLOAD_TOKEN);
    const stat = await blobs.stat(processingUploadKey(ACCOUNT, token));
    expect(stat).toMatchObject({
      size: 11,
      contentType: 'text/plain',
      metadata: { filename: 'notes.txt', password: 'pw', language: 'en', md5: '5eb63bbbe01eeed093cb22bb8f5acdc3' },
    });
    const other = await uploads.stage({ accountId: ACCOUNT, body: Buffer.from('x'), filename: 'a.txt', context });
    expect(other).not.toBe(token);
  });

  it('refuses unsupported types (415), oversize files (413, declared or streamed), and a wrong x-md5 (422), keeping nothing', async () => {
    await expect(
      uploads.stage({
        accountId: ACCOUNT,
        body: Buffer.from('x'),
        filename: 'tool.exe',
        declaredType: 'application/x-msdownload',
        context,
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_MEDIA_TYPE });
    await expect(
      uploads.stage({ accountId: ACCOUNT, body: Buffer.from('x'), filename: 'a.txt', declaredSize: 5000, context }),
    ).rejects.toMatchObject({ code: ErrorCodes.PAYLOAD_TOO_LARGE });
    await expect(uploads.stage({ accountId: ACCOUNT, body: Buffer.alloc(5000, 97), filename: 'a.txt', context })).rejects.toMatchObject({
      code: ErrorCodes.PAYLOAD_TOO_LARGE,
    });
    await expect(
      uploads.stage({ accountId: ACCOUNT, body: Buffer.from('abc'), filename: 'a.txt', md5: '0'.repeat(32), context }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    await expect(
      uploads.stage({ accountId: ACCOUNT, body: Buffer.from('abc'), filename: 'a.txt', md5: 'not-an-md5', context }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    expect(await all(blobs)).toEqual([]);
  });

  it('ends a resumable (TUS) upload to process with a token for the whole file', async () => {
    const tus = new TusService(blobs, fakeBus(), new UploadService(fakeBus(), blobs), uploads);
    const state = await tus.create({
      owner: { account: ACCOUNT },
      length: 10,
      deferLength: false,
      metadata: { filename: 'parts.txt' },
      context,
    });
    const actor = { user: 'u', client_type: 'api' } as never;
    const first = await tus.append(`processing:${ACCOUNT}`, state.id, 0, undefined, Readable.from([Buffer.from('01234')]), actor, context);
    expect(first.done).toBeUndefined();
    // Another account's namespace does not find it.
    await expect(tus.status('processing:acc-2', state.id)).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
    const last = await tus.append(`processing:${ACCOUNT}`, state.id, 5, undefined, Readable.from([Buffer.from('56789')]), actor, context);
    expect(typeof last.done).toBe('string');
    const token = last.done as string;
    const { body } = await blobs.get(processingUploadKey(ACCOUNT, token));
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('0123456789');
    // The parts and the state are gone; only the staged file is left.
    expect(await all(blobs)).toEqual([processingUploadKey(ACCOUNT, token)]);
  });

  it('bounds a deferred-length TUS upload by the account limit: bytes past it or a length above it → 413, and the upload is gone', async () => {
    const tus = new TusService(blobs, fakeBus(), new UploadService(fakeBus(), blobs), uploads);
    const actor = { user: 'u', client_type: 'api' } as never;
    const ns = `processing:${ACCOUNT}`;
    await expect(
      tus.create({ owner: { account: ACCOUNT }, length: 1001, deferLength: false, metadata: { filename: 'big.txt' }, context }),
    ).rejects.toMatchObject({ code: ErrorCodes.PAYLOAD_TOO_LARGE });
    const growing = await tus.create({ owner: { account: ACCOUNT }, deferLength: true, metadata: { filename: 'big.txt' }, context });
    await tus.append(ns, growing.id, 0, undefined, Readable.from([Buffer.alloc(600, 97)]), actor, context);
    await expect(tus.append(ns, growing.id, 600, undefined, Readable.from([Buffer.alloc(600, 97)]), actor, context)).rejects.toMatchObject({
      code: ErrorCodes.PAYLOAD_TOO_LARGE,
    });
    await expect(tus.status(ns, growing.id)).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
    const declared = await tus.create({ owner: { account: ACCOUNT }, deferLength: true, metadata: { filename: 'big.txt' }, context });
    await expect(tus.append(ns, declared.id, 0, 5000, Readable.from([Buffer.from('x')]), actor, context)).rejects.toMatchObject({
      code: ErrorCodes.PAYLOAD_TOO_LARGE,
    });
    expect(await all(blobs)).toEqual([]);
  });

  it('sweeps staged files and TUS uploads untouched for a day, and nothing newer', async () => {
    const sweeper = new StagedUploadsSweeper(blobs);
    const stale = await uploads.stage({ accountId: ACCOUNT, body: Buffer.from('old'), filename: 'a.txt', context });
    const tus = new TusService(blobs, fakeBus(), new UploadService(fakeBus(), blobs), uploads);
    const abandoned = await tus.create({ owner: { kbid: 'kb-1' }, length: 10, deferLength: false, metadata: {}, context });
    const resumed = await tus.create({ owner: { account: ACCOUNT }, length: 10, deferLength: false, metadata: {}, context });
    age(root, 25 * 3600 * 1000);
    // A chunk written today keeps its upload, although the upload began two days ago.
    await tus.append(
      `processing:${ACCOUNT}`,
      resumed.id,
      0,
      undefined,
      Readable.from([Buffer.from('01234')]),
      { user: 'u', client_type: 'api' } as never,
      context,
    );
    const fresh = await uploads.stage({ accountId: ACCOUNT, body: Buffer.from('new'), filename: 'b.txt', context });

    expect(await sweeper.sweep()).toEqual({ staged: 1, tus: 1 });
    expect(await blobs.exists(processingUploadKey(ACCOUNT, stale))).toBe(false);
    expect(await blobs.exists(processingUploadKey(ACCOUNT, fresh))).toBe(true);
    await expect(tus.status('kb-1', abandoned.id)).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
    expect((await tus.status(`processing:${ACCOUNT}`, resumed.id)).offset).toBe(5);
    expect(await sweeper.sweep()).toEqual({ staged: 0, tus: 0 });
  });
});
