import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED, l2Normalize, withPrompt, type Embedder } from './embedder';
import { UseLitePool, type UseLitePoolOptions } from './use-lite-pool';

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

let shared: UseLitePool | undefined;

/**
 * The process's pool of embedding workers (use-lite-pool.ts): one per core unless
 * `configureUseLitePool` (EMBEDDING_WORKERS) says otherwise.
 */
export function useLiteWorker(): UseLitePool {
  return (shared ??= new UseLitePool());
}

/** Sizes the process's pool (main.ts, from EMBEDDING_WORKERS). */
export function configureUseLitePool(options: UseLitePoolOptions): UseLitePool {
  const pool = useLiteWorker();
  pool.configure(options);
  return pool;
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

  async embedQuery(text: string, o: { background?: boolean } = {}): Promise<number[]> {
    // A query goes to a worker at once; background work waits for an idle one (use-lite-pool.ts).
    const [vector] = await this.embed([withPrompt(this.options.query_prompt, text)], o.background ? { background: true } : { query: true });
    return vector as number[];
  }

  /** The model is shared by every instance in the process, so closing one only retires that one. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private async embed(texts: string[], o: { query?: boolean; background?: boolean } = {}): Promise<number[][]> {
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
