import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './support/processes';

const POOL = join(REPO_ROOT, 'dist', 'libs', 'understanding', 'src', 'pipeline', 'analysis', 'use-lite-pool.js');
const ROUNDS = 12;

/**
 * In a process of its own, since what this guards against kills the process: the built-in model's
 * pool (onnx engine, the default) stopped again and again while a worker is inside an ONNX Runtime
 * call. Terminating such a worker made the call's completion throw a C++ exception in a dead thread,
 * and the process aborted (SIGABRT, "terminate called after throwing an instance of 'Napi::Error'"):
 * it took a whole jest run down, about one stop in four (use-lite-onnx-worker.source.ts).
 */
const SCRIPT = `
const { UseLitePool } = require(${JSON.stringify(POOL)});
(async () => {
  const pool = new UseLitePool({ workers: 1, engine: 'onnx' });
  await pool.embed(['warm up'], { query: true });
  const texts = Array.from({ length: 64 }, (_, i) => 'Passage ' + i + ': the enzyme binds DNA in vitro, and the complex is stable at room temperature.');
  const outcomes = [];
  for (let i = 0; i < ${ROUNDS}; i++) {
    const outcome = pool.embed(texts).then(() => 'embedded', (e) => e.code + (e.details && e.details.retryable ? ' retryable' : ''));
    await new Promise((r) => setTimeout(r, (i % 4) * 5));
    await pool.terminate();
    outcomes.push(await outcome);
    // A later call starts a new worker.
    const [again] = await pool.embed(['after a stop'], { query: true });
    if (again.length !== 512) throw new Error('no vector after a stop');
  }
  await pool.close();
  console.log(JSON.stringify({ outcomes }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe('the built-in embedding pool stopped during model calls', () => {
  it('fails the calls as retryable and never takes the process down', async () => {
    const child = spawn(process.execPath, ['-e', SCRIPT], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    const { outcomes } = JSON.parse(stdout.trim().split('\n').pop() as string) as { outcomes: string[] };
    expect(outcomes).toEqual(Array.from({ length: ROUNDS }, () => 'EMBEDDING_FAILED retryable'));
  }, 120_000);
});
