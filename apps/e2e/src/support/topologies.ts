import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { BusApp } from '@kb/contracts';
import { startAuthNatsServer } from '@kb/platform/testing';
import { HttpClient } from './http-client';
import { seedEmptyCluster, seedStandaloneDatabase } from './pg-template';
import { REPO_ROOT, ServiceProcess, distMain, freePort } from './processes';

export interface BootstrapFile {
  user: { id: string; email: string; password: string };
  personal_access_token: { token: string };
  account: { id: string; slug: string };
  kb: { id: string };
  api_key: { id: string; token: string };
}

/** A running deployment the journeys talk to over HTTP. */
export interface Topology {
  name: string;
  http: HttpClient;
  bootstrap(): BootstrapFile;
  /** Stops processing workers so new jobs stay queued. */
  stopProcessing(): Promise<void>;
  /** Kills the process holding the content service, as a crash would (SIGKILL). */
  crashContent(): Promise<void>;
  /** Kills the process running the processing workers (SIGKILL): standalone, the one process. */
  crashProcessing(): Promise<void>;
  /** Starts what crashProcessing killed. */
  recoverProcessing(): Promise<void>;
  /** Starts whatever crashContent/stopProcessing stopped, with processing enabled. */
  recover(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Stops the process holding the reporting service — distributed: reporting alone, killed
   * (SIGKILL, mid-stream); standalone: the one process (SIGTERM: content flushes what it batched) —
   * runs `whileDown`, then starts it again. Standalone, `whileDown` gets the process's database
   * (served from its data directory meanwhile), e.g. to put messages on its bus.
   */
  restartReporting(
    whileDown?: (db: { query?: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]> }) => Promise<void>,
  ): Promise<void>;
  /** Process id of the process serving HTTP (standalone: the one process; distributed: the gateway). */
  edgePid(): number | undefined;
  /** Distributed: the NATS server the apps use (per-app users and permissions), for tests of the bus itself. */
  nats?: { url: string; prefix: string; credentials(app: BusApp): { user: string; pass: string } };
  /** The directory the file blob store the apps share keeps its objects in (a key's path below it), to look for orphaned files. */
  blobObjectsDir?: string;
  /** Distributed: the machine PostgreSQL database of accounts and reporting (benchmarks read its backends' CPU). */
  database?: string;
}

const PG_ADMIN_URL = process.env['KB_TEST_POSTGRES_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `kb-e2e-${name}-`));
}

/**
 * One process on PGlite. Its database starts as a copy of the migrated template (pg-template.ts)
 * unless `freshDatabase`: then the first start makes it from an empty directory, as a user's does.
 */
export async function startStandalone(extraEnv: Record<string, string> = {}, o: { freshDatabase?: boolean } = {}): Promise<Topology> {
  const dataDir = tempDir('standalone');
  // KB_E2E_FRESH_DATABASE=1: every standalone from an empty directory (to compare, or to rule the copy out).
  if (!o.freshDatabase && !process.env['KB_E2E_FRESH_DATABASE']) seedStandaloneDatabase(dataDir);
  const port = await freePort();
  // A short ack wait: the crash tests see a dead worker's job handed on within seconds.
  const base = {
    PORT: String(port),
    DATA_DIR: dataDir,
    ACCESS_CACHE_TTL_SECONDS: '5',
    PROCESSING_ALLOW_PRIVATE_NETWORKS: 'true',
    PROCESSING_ACK_WAIT_MS: '3000',
    WEBHOOK_RETRY_BACKOFF_MS: '300',
    // The REMi LLM judge would call a KB's fake provider after each answer, in between the requests
    // the journeys script and count: off unless a journey turns it on (remi-judge-journey.ts).
    REMI_JUDGE: 'false',
    ...extraEnv,
  };
  let proc: ServiceProcess | undefined;
  const launch = async (extra: Record<string, string> = {}) => {
    proc = new ServiceProcess('standalone', distMain('standalone'), { ...base, ...extra }, dataDir);
    proc.start();
    await proc.waitReady(`http://127.0.0.1:${port}/health/ready`);
  };
  try {
    await launch();
  } catch (err) {
    await proc?.stop('SIGTERM');
    if (!process.env['KB_E2E_KEEP']) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: 'standalone',
    http: new HttpClient(`http://127.0.0.1:${port}`),
    blobObjectsDir: join(dataDir, 'blobs', 'objects'),
    bootstrap: () => JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapFile,
    stopProcessing: async () => {
      await proc?.stop('SIGTERM');
      await launch({ PROCESSING_WORKERS_ENABLED: 'false' });
    },
    crashContent: async () => proc?.stop('SIGKILL'),
    crashProcessing: async () => proc?.stop('SIGKILL'),
    recoverProcessing: () => launch(),
    restartReporting: async (whileDown) => {
      await proc?.stop('SIGTERM');
      if (whileDown) await withDatabase(join(dataDir, 'pg'), dataDir, whileDown);
      await launch();
    },
    edgePid: () => proc?.pid,
    recover: () => launch(),
    stop: async () => {
      await proc?.stop('SIGTERM');
      // KB_E2E_KEEP=1 keeps data and logs for a look after a failure.
      if (!process.env['KB_E2E_KEEP']) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Serves a stopped standalone's PGlite directory (the same server the distributed topology uses) while `fn` runs. */
async function withDatabase(
  pgDir: string,
  logDir: string,
  fn: (db: { query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]> }) => Promise<void>,
): Promise<void> {
  const server = new ServiceProcess(
    'pglite-offline',
    join(REPO_ROOT, 'dist', 'libs', 'platform', 'database', 'src', 'bin', 'pglite-server.js'),
    {
      PGLITE_DATA_DIR: pgDir,
      PGLITE_PORT: String(await freePort()),
    },
    logDir,
  );
  server.start();
  try {
    const line = await server.waitForOutput(/pglite listening/);
    const client = new Client({ connectionString: (JSON.parse(line) as { url: string }).url });
    await client.connect();
    try {
      await fn({ query: async (sql, params) => (await client.query(sql, params)).rows as Record<string, unknown>[] });
    } finally {
      await client.end();
    }
  } finally {
    await server.stop('SIGTERM');
  }
}

/** Replicas of the apps that scale out (the others run one process each). */
export interface DistributedScale {
  gateway?: number;
  understanding?: number;
}

/** The distributed topology with its processes in the test's hands (rolling restarts). */
export interface Deployment extends Topology {
  /** Every app process by name: `accounts`, `content`, `reporting`, then `gateway` or `gateway-1`…, `understanding` or `understanding-1`…. */
  instances(): string[];
  /** Base URL of each gateway process, in instance order. */
  gatewayUrls(): string[];
  /** SIGTERM, wait for the process to exit, start it again and wait until it is ready; returns the exit code. */
  restart(instance: string): Promise<number | null | undefined>;
  /** Everything the instance wrote to stdout/stderr across its restarts (its log file). */
  log(instance: string): string;
}

/**
 * Every app as its own process over real NATS JetStream; accounts and reporting on the machine's
 * PostgreSQL (a fresh database per run), content on a PGlite server process (it needs pgvector).
 * NATS is a server of the run's own (the machine's nats-server binary) configured as production:
 * one user per app with the subject permissions of the bus access table, no anonymous access.
 * `scale` runs several gateway or understanding processes (named `gateway-1`, `gateway-2`, …);
 * `appEnv` is keyed by app, or by instance name for one replica. `http` talks to the first gateway.
 */
export async function startDistributed(
  appEnv: Record<string, Record<string, string>> = {},
  scale: DistributedScale = {},
): Promise<Deployment> {
  const runId = randomBytes(4).toString('hex');
  const prefix = `e2e${runId}_`;
  const nats = await startAuthNatsServer({ prefix });
  const dataDir = tempDir('distributed');
  const database = `kb_e2e_${runId}`;
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
  } catch (err) {
    await admin.end().catch(() => undefined);
    await nats.stop();
    throw err;
  }
  const pgUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${database}`);

  const pgPort = await freePort();
  // An initdb'd cluster copied in (pg-template.ts); content migrates it at start, as a new one.
  if (!process.env['KB_E2E_FRESH_DATABASE']) seedEmptyCluster(join(dataDir, 'content-pg'));
  const pglite = new ServiceProcess(
    'pglite',
    join(REPO_ROOT, 'dist', 'libs', 'platform', 'database', 'src', 'bin', 'pglite-server.js'),
    {
      PGLITE_DATA_DIR: join(dataDir, 'content-pg'),
      PGLITE_PORT: String(pgPort),
    },
    dataDir,
  );
  pglite.start();
  const line = await pglite.waitForOutput(/pglite listening/).catch(async (err: unknown) => {
    await pglite.stop('SIGTERM');
    await nats.stop();
    throw err;
  });
  const contentUrl = (JSON.parse(line) as { url: string }).url;

  const common = {
    BUS_TRANSPORT: 'nats',
    BUS_PREFIX: prefix,
    KB_SECRET: randomBytes(32).toString('hex'),
    DATA_DIR: dataDir,
    ACCOUNTS_DATABASE_URL: pgUrl,
    REPORTING_DATABASE_URL: pgUrl,
    CONTENT_DATABASE_URL: contentUrl,
    // The REMi LLM judge: off unless a journey turns it on (as in startStandalone).
    REMI_JUDGE: 'false',
    // The journeys serve files and pages from a local HTTP server, which the SSRF guard refuses by default.
    PROCESSING_ALLOW_PRIVATE_NETWORKS: 'true',
    PROCESSING_ACK_WAIT_MS: '3000',
    WEBHOOK_RETRY_BACKOFF_MS: '300',
  };
  const ports: Record<string, number> = {};
  const procs: Record<string, ServiceProcess> = {};
  const replicas = (app: 'gateway' | 'understanding') => {
    const n = Math.max(1, scale[app] ?? 1);
    return n === 1 ? [app] : Array.from({ length: n }, (_, i) => `${app}-${i + 1}`);
  };
  const gateways = replicas('gateway');
  const understandings = replicas('understanding');
  const appOf = (instance: string) => instance.replace(/-\d+$/, '');
  const launch = async (instance: string, extra: Record<string, string> = {}) => {
    const app = appOf(instance);
    ports[instance] ??= await freePort();
    const proc = new ServiceProcess(
      instance,
      distMain(app),
      { ...common, ...nats.appEnv(app as BusApp), PORT: String(ports[instance]), ...appEnv[app], ...appEnv[instance], ...extra },
      dataDir,
    );
    procs[instance] = proc;
    proc.start();
    await proc.waitReady(`http://127.0.0.1:${ports[instance]}/health/ready`);
  };
  const stop = async () => {
    await Promise.all(Object.values(procs).map((p) => p.stop('SIGTERM')));
    await pglite.stop('SIGTERM');
    // The server and its JetStream files go with the run.
    await nats.stop();
    const admin2 = new Client({ connectionString: PG_ADMIN_URL });
    await admin2.connect();
    await admin2.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin2.end();
    if (!process.env['KB_E2E_KEEP']) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // Accounts first: its migrations and bootstrap must exist before the edge takes traffic.
    await launch('accounts');
    // allSettled: when one app fails to start, the others have still been spawned and must be stopped.
    const started = await Promise.allSettled(['content', ...understandings, 'reporting', ...gateways].map((a) => launch(a)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    // A start that fails leaves no process behind: one still running would keep jest from exiting.
    await stop().catch(() => undefined);
    throw err;
  }

  const all = async (names: string[], signal: NodeJS.Signals) => void (await Promise.all(names.map((n) => procs[n]?.stop(signal))));
  return {
    name: 'distributed',
    http: new HttpClient(`http://127.0.0.1:${ports[gateways[0] as string]}`),
    blobObjectsDir: join(dataDir, 'blobs', 'objects'),
    bootstrap: () => JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapFile,
    stopProcessing: () => all(understandings, 'SIGTERM'),
    crashContent: async () => procs['content']?.stop('SIGKILL'),
    crashProcessing: () => all(understandings, 'SIGKILL'),
    recoverProcessing: async () => void (await Promise.all(understandings.map((n) => launch(n)))),
    restartReporting: async (whileDown) => {
      await procs['reporting']?.stop('SIGKILL');
      await whileDown?.({});
      await launch('reporting');
    },
    edgePid: () => procs[gateways[0] as string]?.pid,
    nats: { url: nats.url, prefix, credentials: (app) => nats.credentials(app) },
    database,
    recover: async () => {
      await launch('content');
      await Promise.all(understandings.map((n) => launch(n)));
    },
    instances: () => ['accounts', 'content', 'reporting', ...gateways, ...understandings],
    gatewayUrls: () => gateways.map((g) => `http://127.0.0.1:${ports[g]}`),
    restart: async (instance) => {
      const proc = procs[instance];
      if (!proc) throw new Error(`no instance ${instance}`);
      proc.signal('SIGTERM');
      const code = await proc.waitExit();
      await launch(instance);
      return code;
    },
    log: (instance) => readFileSync(join(dataDir, `${instance}.log`), 'utf8'),
    stop,
  };
}
