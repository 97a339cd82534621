import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { ExtractionError } from '../extraction.error';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox-limits';
import type { SandboxReply, SandboxTask } from './sandbox-protocol';

/** A worker is replaced after this many parses, so whatever a parser leaks does not accumulate. */
const JOBS_PER_WORKER = 200;
/** An idle worker is stopped after this long; the next parse starts a fresh one. */
const IDLE_MS = 60_000;

interface Job {
  id: number;
  task: SandboxTask;
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: ChildProcess;
  jobs: number;
  current?: { job: Job; timer: NodeJS.Timeout };
  idleTimer?: NodeJS.Timeout;
}

/**
 * Parses untrusted bytes in a small pool of worker processes. Each worker's V8 heap is capped and
 * each parse has a wall-time limit: a bomb, a pathological document or a parser bug costs one
 * worker — killed and replaced — and fails its own field, never the service or other tenants' jobs.
 *
 * Processes, not worker threads: a worker thread's `resourceLimits` stop gradual growth, but one
 * allocation larger than what is left (a 200 MB string in a 64 MB heap) aborts the whole process
 * (nodejs/node#47224, reproduced by this folder's spec). A process also confines what native code
 * (sharp, pdfjs' canvas) allocates outside V8. Workers are reused because starting one and loading
 * the parsers costs far more than a small document's parse (docs/security.md, "Parsers" has the
 * numbers); a worker runs one parse at a time, so a parse that kills it takes no other job down.
 */
export class ExtractionSandbox {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS) {}

  /**
   * The task's result, or an ExtractionError when the file is at fault (TOO_LARGE for memory or time
   * exhausted, CORRUPT_FILE for a parser crash), or a plain Error when the sandbox itself failed
   * (closed while shutting down, a worker that could not start): those jobs are retried.
   */
  run<T>(task: SandboxTask): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The extraction sandbox is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, resolve: resolve as (r: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; queued and running parses fail with a plain (retryable) Error. */
  async close(): Promise<void> {
    this.closed = true;
    const stopped = (): Error => new Error('The extraction sandbox was stopped');
    for (const job of this.queue.splice(0)) job.reject(stopped());
    await Promise.all([...this.slots].map((slot) => this.retire(slot, stopped())));
  }

  private dispatch(): void {
    while (this.queue.length) {
      const slot = this.idle.pop() ?? (this.slots.size < this.limits.workers ? this.spawn() : undefined);
      if (!slot) return;
      this.start(slot, this.queue.shift() as Job);
    }
  }

  private start(slot: Slot, job: Job): void {
    clearTimeout(slot.idleTimer);
    slot.worker.ref();
    slot.worker.channel?.ref();
    const timer = setTimeout(
      () => void this.retire(slot, new ExtractionError(`Reading the file took longer than ${this.limits.timeoutMs} ms`, 'TOO_LARGE')),
      this.limits.timeoutMs,
    );
    slot.current = { job, timer };
    slot.jobs++;
    slot.worker.send({ id: job.id, task: job.task }, (err) => {
      if (err) void this.retire(slot, new Error(`The file could not be handed to a parser: ${err.message}`));
    });
  }

  private spawn(): Slot {
    const worker = startWorker(this.limits);
    const slot: Slot = { worker, jobs: 0 };
    this.slots.add(slot);
    worker.on('message', (reply: SandboxReply) => this.settle(slot, reply));
    worker.on('error', (err) => void this.retire(slot, new Error(`A parsing worker could not run: ${err.message}`)));
    worker.on('exit', (code, signal) => void this.retire(slot, exitError(code, signal)));
    return slot;
  }

  private settle(slot: Slot, reply: SandboxReply): void {
    const current = slot.current;
    if (!current || current.job.id !== reply.id) return;
    clearTimeout(current.timer);
    slot.current = undefined;
    if (reply.ok) current.job.resolve(reply.result);
    else current.job.reject(new ExtractionError(reply.message, reply.code));
    if (slot.jobs >= JOBS_PER_WORKER || this.closed) {
      void this.retire(slot);
    } else {
      // An idle worker must not keep the process alive; it is stopped after a while to give back its heap.
      slot.worker.unref();
      slot.worker.channel?.unref();
      slot.idleTimer = setTimeout(() => void this.retire(slot), IDLE_MS);
      slot.idleTimer.unref();
      this.idle.push(slot);
    }
    this.dispatch();
  }

  /** Removes a worker from the pool (failing its parse with `error`) and terminates it. */
  private async retire(slot: Slot, error?: Error): Promise<void> {
    if (!this.slots.delete(slot)) return;
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    clearTimeout(slot.idleTimer);
    if (slot.current) {
      clearTimeout(slot.current.timer);
      slot.current.job.reject(error ?? new Error('The parsing worker stopped'));
      slot.current = undefined;
    }
    this.dispatch();
    // A worker that never started (spawn failed) has no pid and will emit no 'exit'.
    if (slot.worker.pid !== undefined && slot.worker.exitCode === null && slot.worker.signalCode === null) {
      const exited = new Promise((resolve) => slot.worker.once('exit', resolve));
      // An idle worker is unreferenced; whoever awaits its end must keep the process alive until then.
      slot.worker.ref();
      slot.worker.kill('SIGKILL');
      await exited;
    }
  }
}

/** Why a worker that was not asked to stop ended, as its current parse's failure. */
function exitError(code: number | null, signal: NodeJS.Signals | null): Error {
  // V8 aborts (SIGABRT) when the heap cap is reached; an unasked SIGKILL is the kernel's OOM killer.
  if (signal === 'SIGABRT' || signal === 'SIGKILL' || code === 134)
    return new ExtractionError('Reading the file needs more memory than allowed', 'TOO_LARGE');
  // The service (or its container) is being stopped: the job goes back to the queue.
  if (signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGHUP') return new Error(`The parsing worker was stopped (${signal})`);
  return new ExtractionError(`The parser crashed (${signal ?? `exit code ${code}`})`, 'CORRUPT_FILE');
}

let shared: ExtractionSandbox | undefined;
let sharedLimits: SandboxLimits = DEFAULT_SANDBOX_LIMITS;

/**
 * The process's sandbox: one pool for every tenant's parses (the processing concurrency already
 * bounds how many run at once). Limits come from `configureExtractionSandbox` (the app's env).
 */
export function extractionSandbox(): ExtractionSandbox {
  shared ??= new ExtractionSandbox(sharedLimits);
  return shared;
}

/** Sets the limits; a running pool is closed so the next parse starts workers with them. */
export function configureExtractionSandbox(limits: SandboxLimits): void {
  sharedLimits = limits;
  void closeExtractionSandbox();
}

export async function closeExtractionSandbox(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}

/**
 * A worker process on extraction.worker, its heap capped, its output discarded (parsers print
 * warnings that do not belong in the service's logs). From a build it is the compiled file next to
 * this one; from sources (jest runs TypeScript in its own VM) a tiny CommonJS loader compiles the .ts
 * files with SWC, the same compiler the build uses.
 */
function startWorker(limits: SandboxLimits): ChildProcess {
  const execArgv = [
    `--max-old-space-size=${limits.maxMemoryMb}`,
    `--max-semi-space-size=${Math.max(1, Math.floor(limits.maxYoungMemoryMb / 3))}`,
  ];
  const stdio: ['ignore', 'ignore', 'ignore', 'ipc'] = ['ignore', 'ignore', 'ignore', 'ipc'];
  const ext = extname(__filename);
  const entry = join(__dirname, `extraction.worker${ext}`);
  // No environment: the service's secrets (KB_SECRET, database and provider credentials) stay out
  // of the process that runs hostile input; NODE_OPTIONS cannot override the heap cap either.
  const env = {};
  if (ext !== '.ts') return fork(entry, [], { execArgv, stdio, serialization: 'advanced', env });
  const boot = JSON.stringify({ entry, swcPath: require.resolve('@swc/core'), swcOptions: swcOptionsFromSources() });
  return spawn(process.execPath, [...execArgv, '-e', TS_LOADER, boot], { stdio, serialization: 'advanced', env });
}

let swcOptions: Record<string, unknown> | undefined;
function swcOptionsFromSources(): Record<string, unknown> {
  if (swcOptions) return swcOptions;
  let dir = __dirname;
  while (!existsSync(join(dir, '.swcrc')) && dirname(dir) !== dir) dir = dirname(dir);
  const config = JSON.parse(readFileSync(join(dir, '.swcrc'), 'utf8')) as { $schema?: string; jsc: Record<string, unknown> };
  delete config.$schema;
  swcOptions = { ...config, jsc: { ...config.jsc, baseUrl: dir }, swcrc: false, sourceMaps: 'inline' };
  return swcOptions;
}

const TS_LOADER = String.raw`
const workerData = JSON.parse(process.argv[1]);
const { readFileSync } = require('node:fs');
const swc = require(workerData.swcPath);
require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(readFileSync(filename, 'utf8'), { ...workerData.swcOptions, filename });
  module._compile(code, filename);
};
require(workerData.entry);
`;
