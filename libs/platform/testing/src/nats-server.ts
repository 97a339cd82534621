import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusApps, type BusApp } from '@kb/contracts';
import { natsPasswordVariable, natsServerConfig } from '@kb/platform/messaging';

/** The machine's NATS server (Debian's nats-server package). */
export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** A nats-server child process with the generated per-app users and permissions. */
export interface AuthNatsServer {
  url: string;
  /** The user name and password of one app on this server. */
  credentials(app: BusApp): { user: string; pass: string };
  /** The environment an app process needs to connect as itself. */
  appEnv(app: BusApp): Record<string, string>;
  /** Extra output of the server (permission violations are logged here). */
  readonly output: string[];
  stop(): Promise<void>;
}

/**
 * Starts `nats-server` on a free port with JetStream, one user per app (random passwords) and the
 * subject permissions of BUS_ACCESS for `prefix`: the configuration production uses, so tests see
 * a permission an app lacks as the failure it would be there. `stop()` kills it and removes its files.
 */
export async function startAuthNatsServer(
  options: { prefix?: string; tls?: { certFile: string; keyFile: string; caFile?: string } } = {},
): Promise<AuthNatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-nats-'));
  const port = await freePort();
  // nats-server parses a variable's value as a configuration value: a letter then hex digits stays a string.
  const passwords = Object.fromEntries(BusApps.map((app) => [app, `p${randomBytes(24).toString('hex')}`])) as Record<BusApp, string>;
  const configFile = join(dir, 'nats-server.conf');
  writeFileSync(
    configFile,
    natsServerConfig({ prefix: options.prefix, listen: `127.0.0.1:${port}`, storeDir: join(dir, 'js'), tls: options.tls }),
  );
  const env = { ...process.env, ...Object.fromEntries(BusApps.map((app) => [natsPasswordVariable(app), passwords[app]])) };
  const child: ChildProcess = spawn(NATS_SERVER_BIN, ['-c', configFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 500) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, child, output);
  } catch (err) {
    await stop();
    throw err;
  }
  const scheme = options.tls ? 'tls' : 'nats';
  const url = `${scheme}://127.0.0.1:${port}`;
  return {
    url,
    output,
    credentials: (app) => ({ user: app, pass: passwords[app] }),
    appEnv: (app) => ({ NATS_URL: url, NATS_USER: app, NATS_PASSWORD: passwords[app] }),
    stop,
  };
}

async function waitForPort(port: number, child: ChildProcess, output: string[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nats-server exited at start:\n${output.join('').slice(-2000)}`);
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nats-server did not listen on ${port} within ${timeoutMs} ms:\n${output.join('').slice(-2000)}`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
