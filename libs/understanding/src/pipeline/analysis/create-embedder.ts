import { DomainError } from '@kb/contracts';
import { EMBEDDING_CONFIG_INVALID, type Embedder, type VectorSimilarity } from './embedder';
import { OpenAiCompatibleEmbedder } from './openai.embedder';
import { USE_LITE_MODEL, UseLiteEmbedder } from './use-lite.embedder';

/** The semantic model a KB gets when it names none: the built-in one, which needs no network. */
export const DEFAULT_SEMANTIC_MODEL = USE_LITE_MODEL;

/**
 * One embedding provider entry of `user_keys` (spec 4.6): credentials and address, plus the
 * vectorset settings (size, matryoshka, similarity, threshold, prompts). timeout_ms and max_batch
 * are this service's own knobs.
 */
export interface EmbeddingProviderConfig {
  url?: string;
  key?: string;
  model?: string;
  size?: number;
  matryoshka?: number[];
  similarity?: string;
  threshold?: number;
  passage_prompt?: string;
  query_prompt?: string;
  timeout_ms?: number;
  max_batch?: number;
}

/**
 * Builds the embedder a provider entry describes: an OpenAI-compatible endpoint when it has a
 * `url`, else the built-in model. The entry comes from a user, so every member is checked and all
 * problems are reported at once.
 */
export function createEmbedder(config?: EmbeddingProviderConfig | null): Embedder {
  const c = config ?? {};
  const issues = validate(c);
  if (issues.length) {
    throw new DomainError(EMBEDDING_CONFIG_INVALID, `invalid embedding provider configuration: ${issues.join('; ')}`, { issues });
  }
  const similarity = c.similarity?.toUpperCase() as VectorSimilarity | undefined;
  if (!c.url) {
    return new UseLiteEmbedder({ threshold: c.threshold, passage_prompt: c.passage_prompt, query_prompt: c.query_prompt });
  }
  return new OpenAiCompatibleEmbedder({
    url: c.url,
    key: c.key,
    model: c.model as string,
    dimensions: c.size,
    matryoshka: c.matryoshka,
    similarity,
    threshold: c.threshold,
    passage_prompt: c.passage_prompt,
    query_prompt: c.query_prompt,
    timeoutMs: c.timeout_ms,
    maxBatch: c.max_batch,
  });
}

function validate(c: EmbeddingProviderConfig): string[] {
  const issues: string[] = [];
  const str = (name: keyof EmbeddingProviderConfig): void => {
    if (c[name] !== undefined && typeof c[name] !== 'string') issues.push(`${name} must be a string`);
  };
  const positiveInt = (name: 'size' | 'timeout_ms' | 'max_batch'): void => {
    const v = c[name];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) <= 0)) issues.push(`${name} must be a positive integer`);
  };
  (['url', 'key', 'model', 'similarity', 'passage_prompt', 'query_prompt'] as const).forEach(str);
  (['size', 'timeout_ms', 'max_batch'] as const).forEach(positiveInt);
  if (c.matryoshka !== undefined && !(Array.isArray(c.matryoshka) && c.matryoshka.every((d) => Number.isInteger(d) && d > 0))) {
    issues.push('matryoshka must be an array of positive integers');
  }
  if (c.threshold !== undefined && !(typeof c.threshold === 'number' && Number.isFinite(c.threshold))) {
    issues.push('threshold must be a number');
  }
  if (typeof c.similarity === 'string' && !['COSINE', 'DOT'].includes(c.similarity.toUpperCase())) {
    issues.push('similarity must be COSINE or DOT');
  }
  if (c.url !== undefined && typeof c.url === 'string' && !/^https?:\/\//.test(c.url)) issues.push('url must be an http(s) address');
  if (c.url && !c.model) issues.push('model is required with url');
  if (!c.url && c.model !== undefined && c.model !== USE_LITE_MODEL) {
    issues.push(`model ${String(c.model)} needs a url: only ${USE_LITE_MODEL} runs built in`);
  }
  if (!c.url && c.size !== undefined && c.size !== 512) issues.push(`${USE_LITE_MODEL} has 512 dimensions`);
  return issues;
}
