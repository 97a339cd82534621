import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { HostOptions, HostReply, HostRequest } from './pglite-host';
import { WORKER_BOOTSTRAP } from './worker-bootstrap';

export interface EmbeddedPostgresOptions {
  /** A directory (created if missing) or `memory://<name>`; the same string means the same database. */
  dataDir: string;
  /** Default 127.0.0.1. Only the first caller for a dataDir chooses host, port and limits. */
  host?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
  /**
   * `unix`: a socket file in a new private directory under the OS temp dir, for clients in this
   * process (host and port are then ignored): a statement's round trip costs less CPU than over
   * loopback TCP (docs/benchmarks.md, issue 22), and no other user of the machine can connect.
   * Default `tcp`, for other processes (the pglite-server of the distributed topology). Unix
   * sockets need a path under ~100 bytes: a longer temp dir falls back to TCP. Only the first
   * caller for a dataDir chooses.
   */
  socket?: 'tcp' | 'unix';
  /** Socket connections accepted at once; every pool of every DataSource counts. Default 100. */
  maxConnections?: number;
  /**
   * PostgreSQL's `shared_buffers` (e.g. `1GB`); default `EMBEDDED_DB_SHARED_BUFFERS`, else
   * PGlite's 128MB. PGlite allocates all of it at start (resident memory) and cannot go beyond
   * ~1.5GB (its WebAssembly memory): raise it for data directories of several GB.
   */
  sharedBuffers?: string;
  /**
   * PostgreSQL's `random_page_cost`; default `EMBEDDED_DB_RANDOM_PAGE_COST`, else PostgreSQL's 4.
   * For operators to try on the SQL path's plans: 1.1 did not change the costliest plan measured
   * at 1 M paragraphs (docs/benchmarks.md, the SQL path at 1 M paragraphs).
   */
  randomPageCost?: number;
  /**
   * A file the database thread rewrites every 5 s with the time PGlite spent per statement text
   * (the 60 costliest); default `EMBEDDED_DB_STATEMENT_STATS`, else none. A diagnostic.
   */
  statementStats?: string;
}

export interface EmbeddedPostgres {
  /**
   * `postgres://postgres@<host>:<port>/postgres`, for the normal `pg` driver; with a Unix socket
   * the host is its directory, percent-encoded (`embeddedConnection` gives TypeORM its parts).
   */
  readonly url: string;
  /** The dataDir key this handle shares (absolute path or the memory:// string). */
  readonly dataDir: string;
  /** How long the instance took to open (0 for a caller that joined a running one). */
  readonly startupMs: number;
  /** Releases this caller's reference; the last release closes the server and the database. */
  stop(): Promise<void>;
}

export const DEFAULT_MAX_CONNECTIONS = 100;

/*
 * PGlite runs in a worker thread, not on the caller's thread: its WASM executes every statement
 * synchronously, so an HNSW build or a large scan would otherwise freeze the service's event loop
 * (HTTP, bus, health checks). In the worker, PGlite is also loaded by Node's own module loader,
 * whose dynamic `import()` PGlite needs (jest's module sandbox does not provide it).
 */
interface RunningInstance {
  url: string;
  startupMs: number;
  worker: Worker;
  /** Settles when the worker thread has ended, whether asked to or not. */
  exited: Promise<void>;
}

/** Counted synchronously, before any await, so a stop racing a start never closes a joined instance. */
interface Entry {
  instance: Promise<RunningInstance>;
  refs: number;
}

/** One instance per dataDir per process: two PGlite instances on one directory corrupt it. */
const running = new Map<string, Entry>();
/** Instances being closed; a new start for the same dataDir waits for the close to finish. */
const closing = new Map<string, Promise<void>>();

function dataDirKey(dataDir: string): string {
  return dataDir.startsWith('memory://') ? dataDir : resolve(dataDir);
}

/**
 * Starts (or joins) the embedded PostgreSQL for `dataDir`: PGlite with pgvector
 * (`CREATE EXTENSION vector` done), served over the PostgreSQL wire protocol on `url`.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const key = dataDirKey(options.dataDir);
  let entry = running.get(key);
  const joined = entry !== undefined;
  if (!entry) {
    const hostOptions: HostOptions = {
      dataDir: key,
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      socket: options.socket === 'unix' && unixSocketsUsable() ? 'unix' : 'tcp',
      maxConnections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      sharedBuffers: sharedBuffers(options.sharedBuffers ?? process.env['EMBEDDED_DB_SHARED_BUFFERS']),
      ...randomPageCostOption(options.randomPageCost ?? process.env['EMBEDDED_DB_RANDOM_PAGE_COST']),
      ...statementStatsOption(options.statementStats ?? process.env['EMBEDDED_DB_STATEMENT_STATS']),
    };
    entry = { instance: (closing.get(key) ?? Promise.resolve()).then(() => spawnHost(hostOptions)), refs: 0 };
    running.set(key, entry);
  }
  entry.refs += 1;
  const current = entry;

  let instance: RunningInstance;
  try {
    instance = await current.instance;
  } catch (err) {
    current.refs -= 1;
    if (running.get(key) === current) running.delete(key);
    throw err;
  }

  let released = false;
  return {
    url: instance.url,
    dataDir: key,
    startupMs: joined ? 0 : instance.startupMs,
    stop: async () => {
      if (released) return;
      released = true;
      current.refs -= 1;
      if (current.refs > 0) return;
      if (running.get(key) === current) running.delete(key);
      const done = stopHost(instance).finally(() => closing.delete(key));
      closing.set(key, done);
      await done;
    },
  };
}

/** Windows has no Unix sockets; elsewhere a socket path must fit sockaddr_un (~104 bytes). */
function unixSocketsUsable(): boolean {
  return process.platform !== 'win32' && join(tmpdir(), 'kb-pg-XXXXXX', '.s.PGSQL.5432').length <= 100;
}

/**
 * The connection options of an embedded instance's URL for TypeORM, which takes a URL's host
 * as it is written (it does not decode a Unix socket's percent-encoded directory).
 */
export function embeddedConnection(url: string): { host: string; port: number; username: string; database: string } {
  const parsed = new URL(url);
  return {
    host: decodeURIComponent(parsed.hostname),
    port: Number(parsed.port),
    username: decodeURIComponent(parsed.username),
    database: decodeURIComponent(parsed.pathname.slice(1)),
  };
}

function statementStatsOption(file: string | undefined): { statementStats?: string } {
  return file ? { statementStats: resolve(file) } : {};
}

/** A checked random_page_cost (none: PostgreSQL's default). */
export function randomPageCostOption(value: number | string | undefined): { randomPageCost?: number } {
  if (value === undefined || (typeof value === 'string' && value.trim() === '')) return {};
  const n = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isFinite(n) || n <= 0 || n > 1000)
    throw new Error(`EMBEDDED_DB_RANDOM_PAGE_COST ${JSON.stringify(value)}: expected a number above 0 and at most 1000, e.g. 1.1`);
  return { randomPageCost: n };
}

/** A checked shared_buffers value (undefined: PGlite's default). */
export function sharedBuffers(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^(\d+)\s*(kB|MB|GB)$/.exec(value.trim());
  const mb = m ? Number(m[1]) / (m[2] === 'kB' ? 1024 : m[2] === 'GB' ? 1 / 1024 : 1) : NaN;
  if (!m || mb < 1 || mb > 1536)
    throw new Error(`EMBEDDED_DB_SHARED_BUFFERS ${JSON.stringify(value)}: expected a size between 1MB and 1536MB, e.g. 512MB or 1GB`);
  return `${m[1]}${m[2]}`;
}

/** Test and diagnostics aid: the dataDirs with a running instance in this process. */
export function runningEmbeddedDataDirs(): string[] {
  return [...running.keys()];
}

function spawnHost(options: HostOptions): Promise<RunningInstance> {
  const worker = new Worker(WORKER_BOOTSTRAP, {
    eval: true,
    workerData: { bootstrap: { entry: require.resolve('./pglite-host'), swcCore: resolveOptional('@swc/core') }, options },
  });
  return new Promise<RunningInstance>((resolveReady, reject) => {
    const onMessage = (reply: HostReply): void => {
      if (reply.type === 'ready') {
        cleanup();
        const exited = new Promise<void>((done) => worker.once('exit', () => done()));
        resolveReady({ url: reply.url, startupMs: reply.startupMs, worker, exited });
      } else if (reply.type === 'failed') {
        cleanup();
        reject(new Error(`embedded PostgreSQL failed to start: ${reply.message}`));
      }
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`embedded PostgreSQL worker exited with code ${code} before it was ready`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  }).then((instance) => {
    // Errors after startup must not crash the host process through an unhandled 'error' event.
    worker.on('error', (err) => process.emitWarning(`embedded PostgreSQL worker failed: ${err.message}`));
    return instance;
  });
}

async function stopHost(instance: RunningInstance): Promise<void> {
  let stopError: string | undefined;
  instance.worker.on('message', (reply: HostReply) => {
    if (reply.type === 'stopped' && reply.error) stopError = reply.error;
  });
  const request: HostRequest = { type: 'stop' };
  instance.worker.postMessage(request);
  await instance.exited;
  if (stopError) throw new Error(`embedded PostgreSQL did not stop cleanly: ${stopError}`);
}

function resolveOptional(id: string): string | undefined {
  try {
    return require.resolve(id);
  } catch {
    return undefined;
  }
}
