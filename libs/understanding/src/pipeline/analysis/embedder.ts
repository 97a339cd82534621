export type VectorSimilarity = 'COSINE' | 'DOT';

/**
 * The one port every semantic model sits behind. Passages and queries are embedded by different
 * methods because asymmetric models (e5, bge, nomic…) want different prompts for each.
 */
export interface Embedder {
  /** Semantic model id, the vectorset name (e.g. 'en-use-lite-2024'). */
  readonly model: string;
  /** Vector length; 0 until the first call when neither configured nor known for the model. */
  readonly dimensions: number;
  readonly similarity: VectorSimilarity;
  /** Default semantic `min_score` for this model (API-MAP 4.4). */
  readonly threshold: number;
  /** Applies `passage_prompt`; one vector per text, in input order. */
  embedPassages(texts: string[]): Promise<number[][]>;
  /** Applies `query_prompt`. */
  /**
   * A query's vector. `background`: work that may wait (answer scoring), queued behind the queries
   * people are waiting for where the model runs here; a remote model ignores it.
   */
  embedQuery(text: string, o?: { background?: boolean }): Promise<number[]>;
  close(): Promise<void>;
}

/** Error code of every embedding failure; `details` say whether a later retry may succeed. */
export const EMBEDDING_FAILED = 'EMBEDDING_FAILED';
export const EMBEDDING_CONFIG_INVALID = 'EMBEDDING_CONFIG_INVALID';

/** Scales `v` to unit length in place, so a dot product is the cosine; a zero vector stays zero. */
export function l2Normalize(v: number[]): number[] {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

export function dotProduct(a: number[], b: number[]): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

export function cosineSimilarity(a: number[], b: number[]): number {
  const denominator = Math.sqrt(dotProduct(a, a) * dotProduct(b, b));
  return denominator > 0 ? dotProduct(a, b) / denominator : 0;
}

/** Prompts are prefixes ("query: ", "search_document: "); an absent prompt leaves the text alone. */
export function withPrompt(prompt: string | undefined, text: string): string {
  return prompt ? `${prompt}${text}` : text;
}

/** Splits `items` into consecutive batches of at most `size`. */
export function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}
