import { createHash } from 'node:crypto';
import type { Client } from 'minio';
import { uploadStreamToS3 } from './s3-upload';

const PART = 8;

/** Records calls instead of talking to S3; `failPart` makes one part upload fail. */
function fakeClient(options: { failPart?: number; resetPart?: number } = {}) {
  const calls: string[] = [];
  const parts: Buffer[] = [];
  const client = {
    putObject: jest.fn(async (_b: string, _k: string, body: Buffer) => {
      calls.push(`put:${body.length}`);
      return { etag: createHash('md5').update(body).digest('hex'), versionId: null };
    }),
    initiateNewMultipartUpload: jest.fn(async () => {
      calls.push('initiate');
      return 'upload-1';
    }),
    uploadPart: jest.fn(async (config: { partNumber: number; headers: Record<string, string> }, body: Buffer) => {
      if (config.partNumber === options.failPart) throw new Error('part failed');
      if (config.partNumber === options.resetPart) {
        options.resetPart = undefined; // the first attempt only
        calls.push(`reset${config.partNumber}`);
        throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      }
      expect(config.headers['Content-MD5']).toBe(createHash('md5').update(body).digest('base64'));
      calls.push(`part${config.partNumber}:${body.length}`);
      parts.push(Buffer.from(body));
      return { etag: `e${config.partNumber}`, key: 'k', part: config.partNumber };
    }),
    completeMultipartUpload: jest.fn(async (_b: string, _k: string, _id: string, etags: { part: number; etag: string }[]) => {
      calls.push(`complete:${etags.map((e) => e.etag).join(',')}`);
      return { etag: 'multi-2', versionId: null };
    }),
    abortMultipartUpload: jest.fn(async () => {
      calls.push('abort');
    }),
  };
  return { client: client as unknown as Client, calls, parts };
}

async function* chunks(sizes: number[], failAfter?: number): AsyncGenerator<Buffer> {
  let n = 0;
  for (const size of sizes) {
    if (failAfter !== undefined && n >= failAfter) throw new Error('source failed');
    yield Buffer.alloc(size, n++);
  }
}

const target = (client: Client) => ({ client, bucket: 'b', key: 'k', partSize: PART, headers: { 'Content-Type': 'text/plain' } });

describe('uploadStreamToS3', () => {
  it('sends a part again once when its connection was reset, and fails on a second reset', async () => {
    const { client, calls, parts } = fakeClient({ resetPart: 2 });
    await uploadStreamToS3(target(client), chunks([8, 8, 8]));
    expect(calls).toEqual(['initiate', 'part1:8', 'reset2', 'part2:8', 'part3:8', 'complete:e1,e2,e3']);
    expect(Buffer.concat(parts)).toEqual(Buffer.concat([0, 1, 2].map((i) => Buffer.alloc(8, i))));

    const always = fakeClient();
    (always.client.uploadPart as unknown as jest.Mock).mockImplementation(async () => {
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    });
    await expect(uploadStreamToS3(target(always.client), chunks([8, 8, 8]))).rejects.toThrow('ECONNRESET');
    expect((always.client.uploadPart as unknown as jest.Mock).mock.calls).toHaveLength(2);
    expect(always.calls).toContain('abort');
  });

  it('sends objects up to one part in a single PUT', async () => {
    const { client, calls } = fakeClient();
    await uploadStreamToS3(target(client), chunks([3, 5]));
    expect(calls).toEqual(['put:8']);
  });

  it('sends larger objects as exact-size parts, then completes', async () => {
    const { client, calls, parts } = fakeClient();
    const result = await uploadStreamToS3(target(client), chunks([5, 5, 5, 5, 1]));
    expect(calls).toEqual(['initiate', 'part1:8', 'part2:8', 'part3:5', 'complete:e1,e2,e3']);
    expect(Buffer.concat(parts)).toEqual(Buffer.concat([...[0, 1, 2, 3].map((i) => Buffer.alloc(5, i)), Buffer.alloc(1, 4)]));
    expect(result.etag).toBe('multi-2');
  });

  it('splits one big chunk without losing bytes', async () => {
    const { client, calls } = fakeClient();
    await uploadStreamToS3(target(client), chunks([20]));
    expect(calls).toEqual(['initiate', 'part1:8', 'part2:8', 'part3:4', 'complete:e1,e2,e3']);
  });

  it('aborts the multipart upload when the source fails', async () => {
    const { client, calls } = fakeClient();
    await expect(uploadStreamToS3(target(client), chunks([5, 5, 5, 5], 3))).rejects.toThrow('source failed');
    expect(calls).toEqual(['initiate', 'part1:8', 'abort']);
  });

  it('aborts when a part upload fails, and stops reading the source', async () => {
    const { client, calls } = fakeClient({ failPart: 2 });
    let pulled = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield Buffer.alloc(4);
      }
    }
    await expect(uploadStreamToS3(target(client), counted())).rejects.toThrow('part failed');
    expect(calls).toEqual(['initiate', 'part1:8', 'abort']);
    expect(pulled).toBeLessThan(10);
  });

  it('sends nothing when the source fails before a part is full', async () => {
    const { client, calls } = fakeClient();
    await expect(uploadStreamToS3(target(client), chunks([3, 3, 3], 1))).rejects.toThrow('source failed');
    expect(calls).toEqual([]);
  });
});
