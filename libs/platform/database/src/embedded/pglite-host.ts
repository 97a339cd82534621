import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { coalesceWrites } from './coalesce-writes';
import { guardSharedSession } from './pglite-session-guard';
import { profileToFile } from './statement-profile';

/*
 * This module runs inside the worker thread that hosts PGlite (see embedded-postgres.ts): the
 * database, its pgvector extension and the socket server all live there, and the rest of the
 * process reaches them over a socket (TCP or a Unix socket) with the normal `pg` driver.
 */

export interface HostOptions {
  /** Absolute path or memory://name. */
  dataDir: string;
  host: string;
  port: number;
  /** `unix`: host and port are ignored (see EmbeddedPostgresOptions.socket). */
  socket: 'tcp' | 'unix';
  maxConnections: number;
  /** shared_buffers, when not PGlite's default. */
  sharedBuffers?: string;
  /** random_page_cost, when not PostgreSQL's default (4). */
  randomPageCost?: number;
  /** A file to write the time spent per statement to (EMBEDDED_DB_STATEMENT_STATS). */
  statementStats?: string;
}

export type HostRequest = { type: 'stop' };
export type HostReply =
  | { type: 'ready'; url: string; startupMs: number }
  | { type: 'failed'; message: string; stack?: string }
  | { type: 'stopped'; error?: string };

export interface PgliteHost {
  url: string;
  startupMs: number;
  close(): Promise<void>;
}

export async function openPgliteHost(options: HostOptions): Promise<PgliteHost> {
  const started = Date.now();
  let lock: DataDirLock | undefined;
  if (!options.dataDir.startsWith('memory://')) {
    mkdirSync(options.dataDir, { recursive: true });
    lock = acquireDataDirLock(options.dataDir);
  }
  let db: PGlite | undefined;
  const socketDir = options.socket === 'unix' ? privateSocketDir() : undefined;
  try {
    const settings = [
      ...(options.sharedBuffers ? [`shared_buffers=${options.sharedBuffers}`] : []),
      ...(options.randomPageCost !== undefined ? [`random_page_cost=${options.randomPageCost}`] : []),
    ];
    const startParams = settings.length ? [...PGlite.defaultStartParams, ...settings.flatMap((x) => ['-c', x])] : undefined;
    db = await PGlite.create(options.dataDir, { extensions: { vector }, ...(startParams ? { startParams } : {}) });
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
    const profiling = options.statementStats ? profileToFile(options.statementStats) : undefined;
    const server = new PGLiteSocketServer({
      db: guardSharedSession(db, profiling?.profile),
      ...(socketDir ? { path: join(socketDir, `.s.PGSQL.${UNIX_SOCKET_PORT}`) } : { host: options.host, port: options.port }),
      maxConnections: options.maxConnections,
    });
    // Each accepted socket gets its writes batched per event-loop turn (see coalesceWrites).
    const accept = server as unknown as { handleConnection(socket: Socket): Promise<void> };
    const handleConnection = accept.handleConnection.bind(server);
    accept.handleConnection = (socket) => handleConnection(coalesceWrites(socket));
    await server.start();
    const opened = db;
    return {
      // pg reads a host that is a directory as the Unix socket `<dir>/.s.PGSQL.<port>` (as libpq does).
      url: socketDir
        ? `postgres://postgres@${encodeURIComponent(socketDir)}:${UNIX_SOCKET_PORT}/postgres`
        : `postgres://postgres@${server.getServerConn()}/postgres`,
      startupMs: Date.now() - started,
      close: async () => {
        try {
          // stop() resolves once every client socket is gone, so no handler touches the db afterwards.
          await server.stop();
        } finally {
          profiling?.stop();
          try {
            if (!opened.closed) await opened.close();
          } finally {
            lock?.release();
            if (socketDir) rmSync(socketDir, { recursive: true, force: true });
          }
        }
      },
    };
  } catch (err) {
    if (db && !db.closed) await db.close();
    lock?.release();
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }
}

/** The port number only names the socket file (`.s.PGSQL.5432`); nothing listens on a port. */
const UNIX_SOCKET_PORT = 5432;

/**
 * A fresh directory only this user may enter (mkdtemp creates it 0700): the socket in it is
 * reachable by this user's processes alone, where a loopback port is open to every local user
 * (PGlite asks no password).
 */
function privateSocketDir(): string {
  return mkdtempSync(join(tmpdir(), 'kb-pg-'));
}

/** Worker entry: opens the host from workerData, reports, and closes on request. */
export async function runHostWorker(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('runHostWorker must run in a worker thread');
  const reply = (message: HostReply): void => port.postMessage(message);

  let host: PgliteHost;
  try {
    host = await openPgliteHost((workerData as { options: HostOptions }).options);
  } catch (err) {
    const error = err as Error;
    reply({ type: 'failed', message: error.message, ...(error.stack ? { stack: error.stack } : {}) });
    port.close();
    return;
  }
  port.on('message', (request: HostRequest) => {
    if (request.type !== 'stop') return;
    host
      .close()
      .then(
        () => reply({ type: 'stopped' }),
        (err: unknown) => reply({ type: 'stopped', error: (err as Error).message }),
      )
      .finally(() => port.close());
  });
  reply({ type: 'ready', url: host.url, startupMs: host.startupMs });
}
