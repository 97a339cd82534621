import { DomainError } from '@kb/contracts';
import { httpFailure, OutboundError, outboundHttp, type OutboundHttp } from '@kb/platform/net';
import {
  EMBEDDING_CONFIG_INVALID,
  EMBEDDING_FAILED,
  batches,
  l2Normalize,
  withPrompt,
  type Embedder,
  type VectorSimilarity,
} from './embedder';

export interface OpenAiCompatibleOptions {
  /** Base address (`https://api.openai.com/v1`) or the full `/embeddings` address. */
  url: string;
  key?: string;
  model: string;
  /** Vector length wanted; sent as `dimensions` only for matryoshka models, which can shorten. */
  dimensions?: number;
  /** Lengths the model can be shortened to; empty or absent means it cannot. */
  matryoshka?: number[];
  similarity?: VectorSimilarity;
  threshold?: number;
  passage_prompt?: string;
  query_prompt?: string;
  timeoutMs?: number;
  /** Inputs per request; OpenAI accepts up to 2048, TEI defaults to 32. */
  maxBatch?: number;
  maxRetries?: number;
  /** A Retry-After longer than this is not waited out: the job fails retryable and is redelivered later. */
  maxRetryAfterMs?: number;
  /** First backoff when the provider gives no Retry-After; doubles per attempt. */
  retryBaseMs?: number;
  /** The guarded outbound client (default: the process's). */
  http?: OutboundHttp;
}

/** A batch of vectors as JSON text: generous for 2048 inputs of 3072 floats, finite all the same. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** Native lengths of well-known models, so `dimensions` is right before the first call. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

interface EmbeddingsResponse {
  data: { index: number; embedding: number[] }[];
}

/** Speaks the OpenAI `/v1/embeddings` protocol, which OpenAI, Azure-compatible proxies, TEI, Ollama and vLLM serve. */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly model: string;
  readonly similarity: VectorSimilarity;
  readonly threshold: number;
  private size: number;
  private readonly endpoint: string;
  private readonly sendDimensions: boolean;
  private readonly controller = new AbortController();

  constructor(private readonly options: OpenAiCompatibleOptions) {
    if (!options.url || !/^https?:\/\//.test(options.url)) throw configError('url must be an http(s) address');
    if (!options.model) throw configError('model is required');
    this.model = options.model;
    this.similarity = options.similarity ?? 'COSINE';
    this.threshold = options.threshold ?? 0.5;
    const matryoshka = options.matryoshka ?? [];
    if (options.dimensions !== undefined && matryoshka.length && !matryoshka.includes(options.dimensions)) {
      throw configError(`size ${options.dimensions} is not one of the matryoshka sizes ${matryoshka.join(', ')}`);
    }
    this.size = options.dimensions ?? (matryoshka.length ? Math.max(...matryoshka) : (KNOWN_DIMENSIONS[options.model] ?? 0));
    this.sendDimensions = matryoshka.length > 0 && this.size > 0;
    this.endpoint = embeddingsUrl(options.url);
  }

  get dimensions(): number {
    return this.size;
  }

  async embedPassages(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    const prepared = texts.map((t) => withPrompt(this.options.passage_prompt, t));
    for (const batch of batches(prepared, this.options.maxBatch ?? 64)) out.push(...(await this.request(batch)));
    return out;
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await this.request([withPrompt(this.options.query_prompt, text)]);
    return vector as number[];
  }

  /** Aborts requests in flight and any retry waits. */
  async close(): Promise<void> {
    this.controller.abort();
  }

  private async request(input: string[]): Promise<number[][]> {
    if (!input.length) return [];
    const maxRetries = this.options.maxRetries ?? 4;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(input);
      if ('vectors' in outcome) return outcome.vectors;
      const { error, retryAfterMs } = outcome;
      const retryable = error.details?.['retryable'] === true;
      if (!retryable || attempt >= maxRetries) throw error;
      const wait = retryAfterMs ?? (this.options.retryBaseMs ?? 500) * 2 ** attempt;
      if (wait > (this.options.maxRetryAfterMs ?? 60_000)) throw error;
      await sleep(wait, this.controller.signal);
    }
  }

  private async attempt(input: string[]): Promise<{ vectors: number[][] } | { error: DomainError; retryAfterMs?: number }> {
    const body = { input, model: this.model, ...(this.sendDimensions ? { dimensions: this.size } : {}) };
    let res: Response;
    try {
      res = await (this.options.http ?? outboundHttp()).fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.key ? { authorization: `Bearer ${this.options.key}` } : {}) },
        body: JSON.stringify(body),
        signal: this.controller.signal,
        timeoutMs: this.options.timeoutMs ?? 30_000,
        maxBytes: MAX_ANSWER_BYTES,
      });
    } catch (err) {
      if (this.controller.signal.aborted) return { error: failure('embedder is closed', undefined, false) };
      // A refused address stays refused; timeouts and refused connections are transient.
      const forbidden = err instanceof OutboundError && err.code === 'FORBIDDEN_ADDRESS';
      return {
        error: failure(
          `embedding provider ${forbidden ? 'not reachable' : 'unreachable'}: ${(err as Error).message}`,
          undefined,
          !forbidden,
        ),
      };
    }
    if (!res.ok) {
      // Status and our own words only: the body of a provider URL pointed at an internal service is not echoed.
      await res.body?.cancel().catch(() => undefined);
      const retryable = res.status === 429 || res.status >= 500;
      return {
        error: failure(httpFailure('embedding provider', res.status), res.status, retryable),
        retryAfterMs: retryAfter(res.headers.get('retry-after')),
      };
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return {
        error: failure(
          `embedding provider failed while answering: ${(err as Error).message}`,
          res.status,
          !(err instanceof OutboundError && err.code === 'TOO_LARGE'),
        ),
      };
    }
    try {
      return { vectors: this.parse(text, input.length) };
    } catch (err) {
      // JSON.parse quotes the text it choked on: say "not JSON" instead of passing that on.
      const why = err instanceof SyntaxError ? 'the answer is not JSON' : (err as Error).message;
      return { error: failure(`embedding provider sent an invalid response: ${why}`, res.status, false) };
    }
  }

  private parse(text: string, expected: number): number[][] {
    const json = JSON.parse(text) as Partial<EmbeddingsResponse>;
    if (!Array.isArray(json.data) || json.data.length !== expected) {
      throw new Error(`expected ${expected} embeddings, got ${Array.isArray(json.data) ? json.data.length : 'none'}`);
    }
    // Providers may answer out of order; `index` is the only link to the input.
    const sorted = [...json.data].sort((a, b) => a.index - b.index);
    return sorted.map((item, i) => {
      if (item.index !== i || !Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === 'number')) {
        throw new Error(`embedding ${i} is missing or not a float array (base64 encoding is not supported)`);
      }
      let vector = item.embedding;
      // A matryoshka vector keeps its meaning when cut; some servers ignore `dimensions`.
      if (this.sendDimensions && vector.length > this.size) vector = vector.slice(0, this.size);
      if (this.size === 0) this.size = vector.length;
      if (vector.length !== this.size) throw new Error(`embedding ${i} has ${vector.length} dimensions, expected ${this.size}`);
      return this.similarity === 'COSINE' ? l2Normalize(vector) : vector;
    });
  }
}

function embeddingsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (base.endsWith('/embeddings')) return base;
  return /\/v\d+$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

/** Retry-After is either seconds or an HTTP date. */
function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function failure(message: string, status: number | undefined, retryable: boolean): DomainError {
  return new DomainError(EMBEDDING_FAILED, message, { status, retryable });
}

function configError(message: string): DomainError {
  return new DomainError(EMBEDDING_CONFIG_INVALID, `embedding provider: ${message}`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(failure('embedder is closed', undefined, false));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(failure('embedder is closed', undefined, false));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
