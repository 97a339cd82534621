import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { createBlobStore, PRESIGNED_BLOB_PATH, verifyPresignedBlobUrl, type BlobStore } from '../src';
import { describeBlobStoreContract } from './blob-store.contract';
import { readAll } from './blob-store.harness';

const SECRET = 'test-signing-secret-0123456789abcdef';
const PUBLIC_BASE_URL = 'https://kb.example.test';

async function fsStore(): Promise<{ store: BlobStore; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'kb-blob-fs-'));
  const store = await createBlobStore({ driver: 'fs', root, signingSecret: SECRET, publicBaseUrl: PUBLIC_BASE_URL });
  return { store, root };
}

/** Plays the gateway: checks the signature, then streams the object. */
async function openFsPresigned(
  store: BlobStore,
  url: string,
): Promise<{ status: number; body: Buffer; contentDisposition?: string | null }> {
  const parsed = new URL(url);
  const key = parsed.pathname
    .slice(PRESIGNED_BLOB_PATH.length + 1)
    .split('/')
    .map(decodeURIComponent)
    .join('/');
  const verdict = verifyPresignedBlobUrl(SECRET, key, parsed.searchParams);
  if (!verdict.valid) return { status: 403, body: Buffer.alloc(0) };
  const { body } = await store.get(key);
  return { status: 200, body: await readAll(body), contentDisposition: verdict.contentDisposition };
}

describeBlobStoreContract('fs', async () => {
  const { store, root } = await fsStore();
  return {
    store,
    openPresigned: (url) => openFsPresigned(store, url),
    scratchEntries: () => readdir(join(root, 'tmp')),
    teardown: async () => {
      await store.close();
      await rm(root, { recursive: true, force: true });
    },
  };
});

describeBlobStoreContract('s3', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'kb-blob-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  // 5 MiB parts (the S3 minimum) so the 20 MiB and failure cases exercise multipart uploads.
  const store = await createBlobStore({
    driver: 's3',
    endPoint: '127.0.0.1',
    port,
    useSSL: false,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    bucket: 'kb-test',
    partSize: 5 * 1024 * 1024,
  });
  return {
    store,
    openPresigned: async (url) => {
      const res = await fetch(url);
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()), contentDisposition: res.headers.get('content-disposition') };
    },
    serverQuirks: { ignoresZeroRangeEnd: true, unorderedListing: true },
    teardown: async () => {
      await store.close();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
});

describe('fs presigned URLs', () => {
  let store: BlobStore;
  let root: string;
  const key = 'content/kbs/kb1/r/r1/f/file/original';

  beforeAll(async () => {
    ({ store, root } = await fsStore());
  });
  afterAll(async () => {
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  const presigned = async (options: { filename?: string; inline?: boolean } = {}): Promise<URL> =>
    new URL(await store.presignGet(key, { expiresInSeconds: 60, ...options }));

  it('points at the gateway route with expiry and signature', async () => {
    const url = await presigned({ filename: 'a.pdf', inline: true });
    expect(url.origin + url.pathname).toBe(`${PUBLIC_BASE_URL}/api/v1/blobs/${key}`);
    expect(url.searchParams.get('expires')).toMatch(/^\d+$/);
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyPresignedBlobUrl(SECRET, key, url.searchParams)).toMatchObject({
      valid: true,
      filename: 'a.pdf',
      inline: true,
      contentDisposition: 'inline; filename="a.pdf"; filename*=UTF-8\'\'a.pdf',
    });
  });

  it('accepts a plain object query as express parses it', async () => {
    const url = await presigned();
    expect(verifyPresignedBlobUrl(SECRET, key, Object.fromEntries(url.searchParams))).toMatchObject({ valid: true, inline: false });
  });

  it('rejects a tampered key, signature, filename or disposition', async () => {
    const url = await presigned({ filename: 'a.pdf' });
    expect(verifyPresignedBlobUrl(SECRET, 'content/kbs/kb2/r/r1/f/file/original', url.searchParams)).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    const sig = url.searchParams.get('signature') as string;
    const flipped = new URLSearchParams(url.searchParams);
    flipped.set('signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    expect(verifyPresignedBlobUrl(SECRET, key, flipped)).toEqual({ valid: false, reason: 'bad_signature' });
    const renamed = new URLSearchParams(url.searchParams);
    renamed.set('filename', 'evil.html');
    expect(verifyPresignedBlobUrl(SECRET, key, renamed)).toEqual({ valid: false, reason: 'bad_signature' });
    const inline = new URLSearchParams(url.searchParams);
    inline.set('inline', '1');
    expect(verifyPresignedBlobUrl(SECRET, key, inline)).toEqual({ valid: false, reason: 'bad_signature' });
    const later = new URLSearchParams(url.searchParams);
    later.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect(verifyPresignedBlobUrl(SECRET, key, later)).toEqual({ valid: false, reason: 'bad_signature' });
    expect(verifyPresignedBlobUrl('another-secret-another-secret-xx', key, url.searchParams)).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
  });

  it('rejects an expired URL', async () => {
    const url = await presigned();
    const expires = Number(url.searchParams.get('expires'));
    expect(verifyPresignedBlobUrl(SECRET, key, url.searchParams, new Date((expires - 1) * 1000))).toMatchObject({ valid: true });
    expect(verifyPresignedBlobUrl(SECRET, key, url.searchParams, new Date(expires * 1000))).toEqual({ valid: false, reason: 'expired' });
  });

  it('rejects malformed queries and keys', async () => {
    const url = await presigned();
    const repeated = new URLSearchParams(url.searchParams);
    repeated.append('signature', url.searchParams.get('signature') as string);
    expect(verifyPresignedBlobUrl(SECRET, key, repeated)).toEqual({ valid: false, reason: 'malformed' });
    expect(verifyPresignedBlobUrl(SECRET, key, { expires: url.searchParams.get('expires') ?? '' })).toEqual({
      valid: false,
      reason: 'malformed',
    });
    expect(verifyPresignedBlobUrl(SECRET, '../etc/passwd', url.searchParams)).toEqual({ valid: false, reason: 'malformed' });
  });
});
