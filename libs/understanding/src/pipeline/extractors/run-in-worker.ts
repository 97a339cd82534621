import { Worker } from 'node:worker_threads';
import { DEFAULT_SANDBOX_LIMITS } from './sandbox/sandbox-limits';

export interface WorkerRunOptions {
  workerData: unknown;
  transferList?: ArrayBuffer[];
  timeoutMs: number;
  maxMemoryMb: number;
}

export type WorkerFailure = { ok: false; name?: string; code?: number | string; message: string };

/**
 * Runs a CommonJS source string in a fresh worker thread and resolves with the first message it
 * posts. Why workers: some parsers are ESM-only (or require ESM), which jest's VM cannot load but
 * a worker's plain Node can; and a worker bounds what a hostile file can cost — its heap is
 * capped, a hang is cut off by the timeout, and a crash does not take the service down.
 * Never rejects: failures come back as `{ ok: false }` with code TIMEOUT or the worker's error code.
 */
export function runInWorker<T extends { ok: boolean }>(source: string, options: WorkerRunOptions): Promise<T | WorkerFailure> {
  const worker = new Worker(source, {
    eval: true,
    workerData: options.workerData,
    transferList: options.transferList,
    // The same young-generation and stack caps as the extraction sandbox's workers.
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxMemoryMb,
      maxYoungGenerationSizeMb: DEFAULT_SANDBOX_LIMITS.maxYoungMemoryMb,
      stackSizeMb: DEFAULT_SANDBOX_LIMITS.stackSizeMb,
    },
    // Parsers print warnings (pdfjs font notices); they do not belong in the service's logs.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: T | WorkerFailure): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, code: 'TIMEOUT', message: 'timed out' }), options.timeoutMs);
    worker.on('message', (m: T) => finish(m));
    worker.on('error', (err: Error & { code?: string }) => finish({ ok: false, name: err.name, code: err.code, message: err.message }));
    worker.on('exit', (code) => finish({ ok: false, message: `worker exited with code ${code}` }));
  });
}
