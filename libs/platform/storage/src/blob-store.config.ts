import { ConfigError, EnvReader, type Env } from '@kb/platform/config';
import type { BlobDriver, BlobStore } from './blob-store';
import { FsBlobStore, type FsBlobStoreConfig } from './fs-blob-store';
import { MIN_S3_PART_SIZE, S3BlobStore, type S3BlobStoreConfig } from './s3-blob-store';

export type BlobStoreConfig = FsBlobStoreConfig | S3BlobStoreConfig;

export const MIN_SIGNING_SECRET_LENGTH = 32;

/** Fallbacks a `main.ts` may supply, e.g. `./data/blobs` and a secret persisted for the embedded default. */
export interface BlobStoreEnvDefaults {
  driver?: BlobDriver;
  fsRoot?: string;
  signingSecret?: string;
  publicBaseUrl?: string;
  s3Bucket?: string;
  s3Region?: string;
}

/**
 * Reads BLOB_DRIVER, BLOB_FS_ROOT, BLOB_SIGNING_SECRET, PUBLIC_BASE_URL, BLOB_S3_ENDPOINT,
 * BLOB_S3_ACCESS_KEY, BLOB_S3_SECRET_KEY, BLOB_S3_BUCKET, BLOB_S3_REGION, BLOB_S3_PART_SIZE.
 * Throws one ConfigError naming every missing or invalid variable.
 */
export function blobStoreConfigFromEnv(env: Env, defaults: BlobStoreEnvDefaults = {}): BlobStoreConfig {
  const reader = new EnvReader(env);
  const driver = reader.oneOf('BLOB_DRIVER', ['fs', 's3'] as const, defaults.driver ?? 'fs');
  let config: BlobStoreConfig;
  if (driver === 'fs') {
    config = {
      driver,
      root: reader.string('BLOB_FS_ROOT', defaults.fsRoot),
      signingSecret: reader.string('BLOB_SIGNING_SECRET', defaults.signingSecret),
      publicBaseUrl: reader.url('PUBLIC_BASE_URL', defaults.publicBaseUrl),
    };
  } else {
    const endpoint = reader.url('BLOB_S3_ENDPOINT');
    const region = reader.optional('BLOB_S3_REGION') ?? defaults.s3Region;
    config = {
      driver,
      ...parseEndpoint(endpoint),
      accessKey: reader.string('BLOB_S3_ACCESS_KEY'),
      secretKey: reader.string('BLOB_S3_SECRET_KEY'),
      bucket: reader.string('BLOB_S3_BUCKET', defaults.s3Bucket),
      ...(region ? { region } : {}),
      partSize: reader.int('BLOB_S3_PART_SIZE', 16 * 1024 * 1024, { min: MIN_S3_PART_SIZE, max: 5 * 1024 ** 3 }),
    };
  }
  let problems: string[] = [];
  try {
    reader.done();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems = err.problems;
  }
  // Every problem starts with its variable's name: add ours only for variables EnvReader accepted.
  const reported = new Set(problems.map(variableOf));
  problems.push(...blobStoreConfigProblems(config, envNames).filter((p) => !reported.has(variableOf(p))));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function variableOf(problem: string): string {
  return problem.split(' ', 1)[0] ?? '';
}

const envNames: Record<string, string> = {
  root: 'BLOB_FS_ROOT',
  signingSecret: 'BLOB_SIGNING_SECRET',
  publicBaseUrl: 'PUBLIC_BASE_URL',
  endPoint: 'BLOB_S3_ENDPOINT',
  accessKey: 'BLOB_S3_ACCESS_KEY',
  secretKey: 'BLOB_S3_SECRET_KEY',
  bucket: 'BLOB_S3_BUCKET',
};

/** Checks a config however it was built (env or code); `names` maps fields to what the operator sets. */
export function blobStoreConfigProblems(config: BlobStoreConfig, names: Record<string, string> = {}): string[] {
  const name = (field: string): string => names[field] ?? field;
  const problems: string[] = [];
  if (config.driver === 'fs') {
    if (!config.root) problems.push(`${name('root')} is required`);
    if (!config.signingSecret || config.signingSecret.length < MIN_SIGNING_SECRET_LENGTH) {
      problems.push(`${name('signingSecret')} must be at least ${MIN_SIGNING_SECRET_LENGTH} characters`);
    }
    if (!/^https?:\/\/[^/]/.test(config.publicBaseUrl ?? '')) problems.push(`${name('publicBaseUrl')} must be an http(s) URL`);
  } else {
    if (!config.endPoint) problems.push(`${name('endPoint')} must be an http(s) URL like http://127.0.0.1:9000`);
    if (!config.accessKey) problems.push(`${name('accessKey')} is required`);
    if (!config.secretKey) problems.push(`${name('secretKey')} is required`);
    // S3 bucket naming rules: 3-63 characters, lower case, digits, dots and hyphens.
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(config.bucket ?? '')) problems.push(`${name('bucket')} must be a valid S3 bucket name`);
  }
  return problems;
}

function parseEndpoint(value: string): { endPoint: string; port: number; useSSL: boolean } {
  try {
    const url = new URL(value);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== ''))
      throw new Error('unsupported');
    const useSSL = url.protocol === 'https:';
    return { endPoint: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : useSSL ? 443 : 80, useSSL };
  } catch {
    return { endPoint: '', port: 0, useSSL: false };
  }
}

/**
 * Builds and readies a store: the fs driver creates its directories, the s3 driver its bucket
 * (unless `ensureBucket: false`, for credentials that may not create buckets).
 */
export async function createBlobStore(config: BlobStoreConfig, options: { ensureBucket?: boolean } = {}): Promise<BlobStore> {
  const problems = blobStoreConfigProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
  if (config.driver === 'fs') {
    const store = new FsBlobStore(config);
    await store.init();
    return store;
  }
  const store = new S3BlobStore(config);
  if (options.ensureBucket !== false) {
    try {
      await store.ensureBucket();
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  return store;
}
