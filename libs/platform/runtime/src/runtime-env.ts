import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EnvReader, type Env } from '@kb/platform/config';

export interface RuntimeEnv {
  /** Where embedded data lives: PGlite under pg/, blobs under blobs/, the bootstrap file. */
  dataDir: string;
  zone: string;
  logLevel: string;
  bus: {
    transport: 'inprocess' | 'nats';
    natsUrl: string;
    prefix: string;
    requestTimeoutMs: number;
    streamReplicas: number;
    nats: NatsSecurity;
  };
  publicBaseUrl: string;
  /** SHUTDOWN_GRACE_MS: the longest a SIGTERM shutdown may take before the process gives up (exit 1). */
  shutdownGraceMs: number;
}

/** How this app authenticates to NATS (the server's per-user permissions limit what it may do). */
export interface NatsSecurity {
  auth?: { user: string; pass: string } | { credsFile: string };
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export function readRuntimeEnv(
  env: Env,
  defaults: { transport: 'inprocess' | 'nats'; port: number },
): { runtime: RuntimeEnv; reader: EnvReader } {
  const reader = new EnvReader(env);
  const runtime: RuntimeEnv = {
    dataDir: resolve(reader.string('DATA_DIR', './data')),
    zone: reader.string('ZONE', 'local'),
    logLevel: reader.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    bus: {
      transport: reader.oneOf('BUS_TRANSPORT', ['inprocess', 'nats'] as const, defaults.transport),
      natsUrl: reader.string('NATS_URL', 'nats://127.0.0.1:4222'),
      prefix: reader.string('BUS_PREFIX', ''),
      requestTimeoutMs: reader.int('BUS_REQUEST_TIMEOUT_MS', 15000, { min: 100, max: 600000 }),
      streamReplicas: reader.int('BUS_STREAM_REPLICAS', 1, { min: 1, max: 5 }),
      nats: readNatsSecurity(reader, env),
    },
    publicBaseUrl: reader.url('PUBLIC_BASE_URL', `http://localhost:${defaults.port}`),
    // Below Kubernetes' default terminationGracePeriodSeconds (30 s), so the process ends on its own.
    shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 25_000, { min: 1_000, max: 3_600_000 }),
  };
  return { runtime, reader };
}

/**
 * NATS_USER with NATS_PASSWORD (or NATS_PASSWORD_FILE, a mounted secret), or NATS_CREDS_FILE;
 * TLS when any of NATS_TLS_CA / NATS_TLS_CERT / NATS_TLS_KEY is set.
 */
function readNatsSecurity(reader: EnvReader, env: Env): NatsSecurity {
  const security: NatsSecurity = {};
  const user = reader.optional('NATS_USER');
  const passwordFile = reader.optional('NATS_PASSWORD_FILE');
  const credsFile = reader.optional('NATS_CREDS_FILE');
  if (user) {
    const pass = passwordFile ? readSecretFile(passwordFile) : reader.string('NATS_PASSWORD');
    security.auth = { user, pass };
  } else if (credsFile) {
    security.auth = { credsFile };
  } else if (env['NATS_PASSWORD'] || passwordFile) {
    reader.string('NATS_USER');
  }
  const tls = {
    caFile: reader.optional('NATS_TLS_CA'),
    certFile: reader.optional('NATS_TLS_CERT'),
    keyFile: reader.optional('NATS_TLS_KEY'),
  };
  if (tls.caFile || tls.certFile || tls.keyFile) security.tls = Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
  return security;
}

function readSecretFile(file: string): string {
  return readFileSync(file, 'utf8').trim();
}

/**
 * The server secret (keys credential hashes and signed tokens). Production sets KB_SECRET; the
 * embedded default generates one on first start and keeps it in the data directory (mode 0600).
 */
export async function serverSecret(env: Env, dataDir: string): Promise<string> {
  const fromEnv = env['KB_SECRET'];
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error('KB_SECRET must be at least 32 characters');
    return fromEnv;
  }
  const file = join(dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    const secret = randomBytes(48).toString('base64url');
    await writeFile(file, secret + '\n', { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    await chmod(file, 0o600);
    return (await readFile(file, 'utf8')).trim();
  }
}
