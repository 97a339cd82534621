import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { AccountsSubjects, ContentSubjects, DomainError, ErrorCodes, type AnyDef } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { UploadService, uploadStrategiesOf } from './upload.service';

const KB = '00000000-0000-4000-8000-0000000000aa';

/** A bus answering the subjects an upload uses; `register` decides what content answers. */
function fakeBus(register: (req?: unknown) => Promise<unknown>, limit = 1000, strategies: string[] = []): MessageBus {
  return {
    request: async (def: AnyDef, req: Record<string, unknown>) => {
      if (def.subject === ContentSubjects.getStrategy.subject) {
        if (strategies.includes(`${String(req['kind'])}:${String(req['strategy_id'])}`)) return { name: 's' };
        throw new DomainError(ErrorCodes.NOT_FOUND, 'Split strategy does not exist');
      }
      if (def.subject === ContentSubjects.md5Exists.subject) return { exists: false };
      if (def.subject === AccountsSubjects.kbUploadLimits.subject)
        return { upload_limit_max_media_file_size: limit, upload_limit_max_non_media_file_size: limit };
      if (def.subject === ContentSubjects.registerUpload.subject) return register(req);
      throw new Error(`unexpected ${def.subject}`);
    },
  } as unknown as MessageBus;
}

async function keys(blobs: BlobStore): Promise<string[]> {
  const out: string[] = [];
  for await (const item of blobs.list(`content/kbs/${KB}/`)) out.push(item.key);
  return out;
}

describe('UploadService', () => {
  let root: string;
  let blobs: BlobStore;
  const base = { kbid: KB, declaredType: 'text/plain', filename: 'a.txt', actor: {}, context: {} };

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'kb-upload-'));
    blobs = await createBlobStore({ driver: 'fs', root, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
  });
  afterEach(async () => {
    await blobs.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stores the bytes and registers them with content', async () => {
    const service = new UploadService(
      fakeBus(async () => ({ uuid: 'r', seqid: 1, field_id: 'f' })),
      blobs,
    );
    await service.upload({ ...base, body: Readable.from([Buffer.from('hello')]) });
    expect(await keys(blobs)).toEqual([expect.stringMatching(/\/f\/file\/[0-9a-f]{32}\/original$/)]);
  });

  it('deletes the stored bytes when content refuses the registration (no blob without a resource)', async () => {
    const service = new UploadService(
      fakeBus(async () => {
        throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'content is down');
      }),
      blobs,
    );
    await expect(service.upload({ ...base, body: Readable.from([Buffer.from('hello')]) })).rejects.toMatchObject({
      code: ErrorCodes.SERVICE_UNAVAILABLE,
    });
    expect(await keys(blobs)).toEqual([]);
  });

  it('refuses a file over the account limit, by declared size or while streaming, and keeps nothing', async () => {
    const service = new UploadService(
      fakeBus(async () => ({ uuid: 'r', seqid: 1, field_id: 'f' }), 10),
      blobs,
    );
    await expect(service.upload({ ...base, declaredSize: 11, body: Readable.from([Buffer.alloc(11)]) })).rejects.toMatchObject({
      code: ErrorCodes.PAYLOAD_TOO_LARGE,
    });
    await expect(service.upload({ ...base, body: Readable.from([Buffer.alloc(6), Buffer.alloc(6)]) })).rejects.toMatchObject({
      code: ErrorCodes.PAYLOAD_TOO_LARGE,
    });
    expect(await keys(blobs)).toEqual([]);
  });

  it('x-skip-store: stores the file under a key of its own and tells content so; a failed registration still keeps nothing', async () => {
    const registered: Record<string, unknown>[] = [];
    const bus = fakeBus(async () => ({ uuid: 'r', seqid: 1, field_id: 'f' }));
    const request = bus.request.bind(bus);
    bus.request = (async (def: AnyDef, payload: Record<string, unknown>) => {
      if (def.subject === ContentSubjects.registerUpload.subject) registered.push(payload);
      return request(def as never, payload as never);
    }) as MessageBus['request'];
    const service = new UploadService(bus, blobs);
    await service.upload({ ...base, skipStore: true, body: Readable.from([Buffer.from('hello')]) });
    expect(await keys(blobs)).toEqual([expect.stringMatching(/\/f\/file\/[0-9a-f]{32}\/unstored\/[0-9a-f-]{36}\/original$/)]);
    expect(registered[0]).toMatchObject({ skip_store: true, file: { uri: `blob:${(await keys(blobs))[0]}` } });

    const failing = new UploadService(
      fakeBus(async () => {
        throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'down');
      }),
      blobs,
    );
    const before = await keys(blobs);
    await expect(failing.upload({ ...base, skipStore: true, body: Readable.from([Buffer.from('x')]) })).rejects.toMatchObject({
      code: ErrorCodes.SERVICE_UNAVAILABLE,
    });
    expect(await keys(blobs)).toEqual(before);
  });

  it('refuses unsupported types before reading the body', async () => {
    const service = new UploadService(
      fakeBus(async () => ({})),
      blobs,
    );
    await expect(
      service.upload({ ...base, declaredType: 'application/x-msdownload', filename: 'a.exe', body: Readable.from([]) }),
    ).rejects.toMatchObject({ code: ErrorCodes.UNSUPPORTED_MEDIA_TYPE });
  });

  describe('strategy headers (x-extract-strategy, x-split-strategy)', () => {
    const split = 'a'.repeat(32);
    const extract = 'b'.repeat(32);

    it("reads both headers, refusing an id not of a strategy's form at its header", () => {
      expect(uploadStrategiesOf({ 'x-split-strategy': split, 'x-extract-strategy': extract })).toEqual({ split, extract });
      expect(uploadStrategiesOf({ 'x-split-strategy': '' })).toEqual({});
      for (const bad of ['../x', 'A'.repeat(32), 'a'.repeat(33)]) {
        try {
          uploadStrategiesOf({ 'x-split-strategy': bad });
          throw new Error('accepted');
        } catch (err) {
          expect((err as DomainError).details).toEqual({ detail: [expect.objectContaining({ loc: ['header', 'x-split-strategy'] })] });
        }
      }
    });

    it('forwards the named strategies to content, and stores nothing when the KB does not have one', async () => {
      let registered: Record<string, unknown> | undefined;
      const service = new UploadService(
        fakeBus(
          async (req) => {
            registered = req as Record<string, unknown>;
            return { uuid: 'r', seqid: 1, field_id: 'f' };
          },
          1000,
          [`split:${split}`, `extract:${extract}`],
        ),
        blobs,
      );
      await service.upload({ ...base, body: Readable.from([Buffer.from('hello')]), strategies: { split, extract } });
      expect(registered).toMatchObject({ split_strategy: split, extract_strategy: extract });

      const strict = new UploadService(
        fakeBus(async () => ({ uuid: 'r', seqid: 1, field_id: 'f' }), 1000, [`extract:${extract}`]),
        blobs,
      );
      const before = await keys(blobs);
      const refused = await strict
        .upload({ ...base, body: Readable.from([Buffer.from('hello')]), strategies: { split, extract } })
        .catch((e: unknown) => e as DomainError);
      expect((refused as DomainError).details).toEqual({ detail: [expect.objectContaining({ loc: ['header', 'x-split-strategy'] })] });
      expect(await keys(blobs)).toEqual(before);
    });
  });
});
