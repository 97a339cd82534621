import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@kb/platform/config';
import { blobStoreConfigFromEnv, createBlobStore } from './blob-store.config';

const SECRET = 'x'.repeat(32);

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('blobStoreConfigFromEnv', () => {
  it('defaults to the fs driver with defaults from main.ts', () => {
    expect(blobStoreConfigFromEnv({}, { fsRoot: './data/blobs', signingSecret: SECRET, publicBaseUrl: 'http://localhost:8080' })).toEqual({
      driver: 'fs',
      root: './data/blobs',
      signingSecret: SECRET,
      publicBaseUrl: 'http://localhost:8080',
    });
  });

  it('lets the environment override the defaults', () => {
    const env = { BLOB_FS_ROOT: '/var/lib/kb', BLOB_SIGNING_SECRET: 'y'.repeat(40), PUBLIC_BASE_URL: 'https://kb.example.com' };
    expect(blobStoreConfigFromEnv(env, { fsRoot: './data', signingSecret: SECRET })).toMatchObject({
      root: '/var/lib/kb',
      signingSecret: 'y'.repeat(40),
      publicBaseUrl: 'https://kb.example.com',
    });
  });

  it('reads the s3 driver from an endpoint URL', () => {
    const env = {
      BLOB_DRIVER: 's3',
      BLOB_S3_ENDPOINT: 'https://minio.internal:9443',
      BLOB_S3_ACCESS_KEY: 'ak',
      BLOB_S3_SECRET_KEY: 'sk',
      BLOB_S3_BUCKET: 'kb-blobs',
      BLOB_S3_REGION: 'eu-west-1',
      BLOB_S3_PART_SIZE: String(8 * 1024 * 1024),
    };
    expect(blobStoreConfigFromEnv(env)).toEqual({
      driver: 's3',
      endPoint: 'minio.internal',
      port: 9443,
      useSSL: true,
      accessKey: 'ak',
      secretKey: 'sk',
      bucket: 'kb-blobs',
      region: 'eu-west-1',
      partSize: 8 * 1024 * 1024,
    });
    expect(blobStoreConfigFromEnv({ ...env, BLOB_S3_ENDPOINT: 'http://127.0.0.1', BLOB_S3_REGION: undefined })).toMatchObject({
      endPoint: '127.0.0.1',
      port: 80,
      useSSL: false,
    });
  });

  it('lists every missing fs variable at once', () => {
    expect(problemsOf(() => blobStoreConfigFromEnv({}))).toEqual([
      'BLOB_FS_ROOT is required',
      'BLOB_SIGNING_SECRET is required',
      'PUBLIC_BASE_URL is required',
    ]);
  });

  it('lists every missing or invalid s3 variable at once', () => {
    const problems = problemsOf(() =>
      blobStoreConfigFromEnv({ BLOB_DRIVER: 's3', BLOB_S3_BUCKET: 'Not_A_Bucket', BLOB_S3_PART_SIZE: '1024' }),
    );
    expect(problems).toEqual([
      'BLOB_S3_ENDPOINT is required',
      'BLOB_S3_ACCESS_KEY is required',
      'BLOB_S3_SECRET_KEY is required',
      expect.stringContaining('BLOB_S3_PART_SIZE must be between'),
      'BLOB_S3_BUCKET must be a valid S3 bucket name',
    ]);
  });

  it('rejects weak secrets, odd endpoints and unknown drivers', () => {
    expect(
      problemsOf(() => blobStoreConfigFromEnv({ BLOB_FS_ROOT: '/d', BLOB_SIGNING_SECRET: 'short', PUBLIC_BASE_URL: 'ftp://x' })),
    ).toEqual(['BLOB_SIGNING_SECRET must be at least 32 characters', 'PUBLIC_BASE_URL must be an http(s) URL']);
    const s3 = { BLOB_DRIVER: 's3', BLOB_S3_ACCESS_KEY: 'a', BLOB_S3_SECRET_KEY: 's', BLOB_S3_BUCKET: 'bkt' };
    expect(problemsOf(() => blobStoreConfigFromEnv({ ...s3, BLOB_S3_ENDPOINT: 'http://minio:9000/some/path' }))).toEqual([
      expect.stringContaining('BLOB_S3_ENDPOINT must be an http(s) URL'),
    ]);
    expect(
      problemsOf(() => blobStoreConfigFromEnv({ BLOB_DRIVER: 'gcs' }, { fsRoot: '/d', signingSecret: SECRET, publicBaseUrl: 'http://x' })),
    ).toEqual([expect.stringContaining('BLOB_DRIVER must be one of fs, s3')]);
  });
});

describe('createBlobStore', () => {
  it('validates configs built in code too', async () => {
    await expect(createBlobStore({ driver: 'fs', root: '', signingSecret: 'short', publicBaseUrl: 'nope' })).rejects.toBeInstanceOf(
      ConfigError,
    );
  });

  it('creates the fs root on start', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kb-blob-cfg-'));
    try {
      const store = await createBlobStore({
        driver: 'fs',
        root: join(root, 'nested', 'blobs'),
        signingSecret: SECRET,
        publicBaseUrl: 'http://localhost',
      });
      expect(store.driver).toBe('fs');
      expect(await store.isHealthy()).toBe(true);
      await store.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
