import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDING_FAILED } from './embedder';
import { USE_LITE_BATCH, UseLitePool } from './use-lite-pool';

/**
 * A fake model: each text gives [length, thread id, batch size]. `slow:<ms>` holds the batch
 * (other messages are served meanwhile), `busy:<ms>` holds the thread as the WASM model does,
 * `crash` kills the thread, `crash-once:<file>` kills it unless the file exists (and creates it),
 * `fail` answers with a model error.
 */
const FAKE = String.raw`
const { parentPort, threadId } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', async ({ id, texts }) => {
  for (const t of texts) {
    if (t === 'crash') process.exit(3);
    if (t.startsWith('crash-once:')) {
      const file = t.slice('crash-once:'.length);
      if (!fs.existsSync(file)) { fs.writeFileSync(file, ''); process.exit(4); }
    }
    if (t.startsWith('slow:')) await new Promise((r) => setTimeout(r, Number(t.slice(5))));
    if (t.startsWith('busy:')) for (const end = Date.now() + Number(t.slice(5)); Date.now() < end; );
  }
  if (texts.includes('fail')) return parentPort.postMessage({ id, ok: false, message: 'bad input' });
  const data = new Float32Array(texts.length * 3);
  texts.forEach((t, i) => data.set([t.length, threadId, texts.length], i * 3));
  parentPort.postMessage({ id, ok: true, dims: 3, data }, [data.buffer]);
});
`;

describe('UseLitePool', () => {
  const pools: UseLitePool[] = [];
  const pool = (o: { workers: number; maxQueued?: number }): UseLitePool => {
    const p = new UseLitePool({ ...o, source: FAKE });
    pools.push(p);
    return p;
  };
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'kb-pool-'))));
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.terminate()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a size outside 1–32', () => {
    expect(() => new UseLitePool({ workers: 0 })).toThrow(RangeError);
    expect(() => new UseLitePool({ workers: 33 })).toThrow(RangeError);
    expect(() => new UseLitePool({ workers: 1.5 })).toThrow(RangeError);
  });

  it('returns one vector per text, in order, in batches of 8 spread over the workers', async () => {
    const p = pool({ workers: 2 });
    const texts = Array.from({ length: 40 }, (_, i) => 'x'.repeat(i + 1));
    texts[0] = 'slow:200';
    const vectors = await p.embed(texts);
    expect(vectors.map((v) => v[0])).toEqual(texts.map((t) => t.length));
    expect(Math.max(...vectors.map((v) => v[2] as number))).toBe(USE_LITE_BATCH);
    // While the first worker holds its slow batch, the second takes the others.
    expect(new Set(vectors.map((v) => v[1])).size).toBe(2);
    expect(p.running).toBe(2);
  });

  it('starts workers on demand, never more than its size', async () => {
    const p = pool({ workers: 3 });
    expect(p.running).toBe(0);
    await p.embed(['one']);
    expect(p.running).toBe(1);
    await Promise.all([p.embed(Array(8).fill('slow:100')), p.embed(Array(8).fill('slow:100')), p.embed(Array(40).fill('a'))]);
    expect(p.running).toBe(3);
  });

  it('serves a query at once from an idle worker while passages keep another busy', async () => {
    const p = pool({ workers: 2 });
    await Promise.all([p.embed(['warm']), p.embed(['warm'], { query: true })]);
    const passages = p.embed(['slow:400']);
    const started = Date.now();
    await p.embed(['query'], { query: true });
    expect(Date.now() - started).toBeLessThan(300);
    await passages;
  });

  it('runs background texts one at a time, after every passage waiting: a query waits behind one of them at most', async () => {
    const p = pool({ workers: 1 });
    await p.embed(['warm']);
    const order: string[] = [];
    const done = (label: string) => () => order.push(label);
    const first = p.embed(['slow:50']).then(done('passage 1'));
    const background = [1, 2, 3].map((i) => p.embed(['slow:30'], { background: true }).then(done(`background ${i}`)));
    const second = p.embed(['p2']).then(done('passage 2'));
    await Promise.all([first, second, ...background]);
    expect(order).toEqual(['passage 1', 'passage 2', 'background 1', 'background 2', 'background 3']);

    order.splice(0);
    // The model holds its thread: what is posted to a worker runs in order.
    const scored = [1, 2, 3].map((i) => p.embed([`busy:${30 + i}`], { background: true }).then(done(`background ${i}`)));
    const query = p.embed(['what causes tides?'], { query: true }).then(done('query'));
    await Promise.all([query, ...scored]);
    expect(order).toEqual(['background 1', 'query', 'background 2', 'background 3']);
    // Each went alone to the worker.
    expect((await p.embed(['a', 'b', 'c'], { background: true })).map((v) => v[2])).toEqual([1, 1, 1]);
  });

  it('bounds the queue: callers beyond it wait their turn and still get their vectors', async () => {
    const p = pool({ workers: 1, maxQueued: 8 });
    const first = p.embed(['slow:150']);
    const calls = Array.from({ length: 6 }, (_, i) => p.embed(Array(5).fill(`call ${i}`)));
    const order: number[] = [];
    calls.forEach((c, i) => void c.then(() => order.push(i)));
    const results = await Promise.all([first, ...calls]);
    expect(results.slice(1).every((r) => r.length === 5)).toBe(true);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('replaces a worker that dies and runs its batch again', async () => {
    const p = pool({ workers: 1 });
    const flag = join(dir, 'once');
    const vectors = await p.embed(['before', `crash-once:${flag}`, 'after']);
    expect(existsSync(flag)).toBe(true);
    expect(vectors.map((v) => v[0])).toEqual([6, `crash-once:${flag}`.length, 5]);
    expect(p.running).toBe(1);
  });

  it('fails a batch whose worker dies twice as retryable, and keeps serving the others', async () => {
    const p = pool({ workers: 2 });
    const doomed = p.embed(['crash']);
    await expect(doomed).rejects.toMatchObject({ code: EMBEDDING_FAILED, details: { retryable: true } });
    await expect(p.embed(['fine'])).resolves.toEqual([[4, expect.any(Number), 1]]);
  });

  it('fails a model error without retrying (not retryable)', async () => {
    const p = pool({ workers: 1 });
    await expect(p.embed(['fail'])).rejects.toMatchObject({ code: EMBEDDING_FAILED, details: { retryable: false } });
    await expect(p.embed(['ok'])).resolves.toHaveLength(1);
  });

  it('close() lets queued and in-flight batches finish, then stops the workers', async () => {
    const p = pool({ workers: 1 });
    const pending = p.embed(['slow:150', ...Array(20).fill('queued')]);
    await p.close(5_000);
    await expect(pending).resolves.toHaveLength(21);
    expect(p.running).toBe(0);
  });

  it('close() gives up after its timeout: what is left fails as retryable', async () => {
    const p = pool({ workers: 1 });
    const pending = p.embed(['slow:2000']);
    await p.close(50);
    await expect(pending).rejects.toMatchObject({ code: EMBEDDING_FAILED, details: { retryable: true } });
    expect(p.running).toBe(0);
    // A later call starts a new worker.
    await expect(p.embed(['again'])).resolves.toHaveLength(1);
  });
});
