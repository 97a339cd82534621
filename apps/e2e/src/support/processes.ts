import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** The repository root, from sources (jest) or from dist/ (benchmarks). */
export const REPO_ROOT = ((): string => {
  let dir = __dirname;
  while (!existsSync(join(dir, 'nx.json'))) {
    const parent = resolve(dir, '..');
    if (parent === dir) throw new Error('repository root not found');
    dir = parent;
  }
  return dir;
})();
export const distMain = (app: string) => join(REPO_ROOT, 'dist', 'apps', app, 'src', 'main.js');

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

/** A real child process running a built app, its output kept in a log file for failures. */
export class ServiceProcess {
  private child?: ChildProcess;
  private exited?: Promise<number | null>;
  readonly output: string[] = [];

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {}

  /** Process id of the running child (for memory sampling in benchmarks). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (!existsSync(this.script)) throw new Error(`${this.script} is missing: run \`npm run build\` first`);
    const log = createWriteStream(join(this.logDir, `${this.name}.log`), { flags: 'a' });
    // KB_SERVICE_NODE_ARGS: extra node flags for the services a test or benchmark starts (e.g. --cpu-prof).
    const nodeArgs = (process.env['KB_SERVICE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeArgs, this.script], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      log.write(chunk);
      this.output.push(chunk.toString());
      if (this.output.length > 500) this.output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((res) =>
      child.on('exit', (code, signal) => {
        // A process that dies without a word (killed, or aborted in native code) still says how.
        log.end(`[${new Date().toISOString()}] ${this.name} exited: code ${code}, signal ${signal}\n`);
        res(code);
      }),
    );
    this.child = child;
  }

  /**
   * Waits until `url` answers 200, failing early with the process output if it dies. Generous by
   * default: on the shared 2-core machine under load a cold standalone took 71 s to be ready
   * (2026-11-27); KB_E2E_READY_TIMEOUT_MS overrides it.
   */
  async waitReady(url: string, timeoutMs = Number(process.env['KB_E2E_READY_TIMEOUT_MS'] ?? 180_000)): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let dead = false;
    void this.exited?.then(() => (dead = true));
    while (Date.now() < deadline) {
      if (dead) throw new Error(`${this.name} exited during start:\n${this.output.join('').slice(-4000)}`);
      try {
        const res = await fetch(url);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`${this.name} not ready at ${url} after ${timeoutMs} ms:\n${this.output.join('').slice(-4000)}`);
  }

  /** Waits for a line of output matching `pattern` and returns it. */
  async waitForOutput(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const line = this.output
        .join('')
        .split('\n')
        .find((l) => pattern.test(l));
      if (line) return line;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${this.name}: no output matching ${pattern}:\n${this.output.join('').slice(-4000)}`);
  }

  /** Sends a signal and returns at once (see `waitExit`). */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** The exit code once the process has exited (null when a signal ended it). */
  async waitExit(): Promise<number | null | undefined> {
    return this.exited;
  }

  /** SIGTERM (clean stop) or SIGKILL (a crash). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}
