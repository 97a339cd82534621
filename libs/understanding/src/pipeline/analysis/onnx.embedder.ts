import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED, l2Normalize, withPrompt, type Embedder } from './embedder';

export type Pooling = 'mean' | 'cls';

export interface OnnxFolderEmbedderOptions {
  /** Semantic model id, the vectorset name. */
  model: string;
  /** A Hugging Face model folder: config.json, tokenizer.json, an ONNX graph (onnx/model.onnx or model.onnx). */
  folder: string;
  /** Expected vector length (the model catalogue's); checked against the folder's model. */
  size?: number;
  threshold?: number;
  /** Defaults when the folder does not say (1_Pooling/config.json, config_sentence_transformers.json). */
  pooling?: Pooling;
  query_prompt?: string;
  passage_prompt?: string;
  /** Texts per inference call; default 16. */
  maxBatch?: number;
  /** ONNX Runtime intra-op threads; default 1 (the workers already run jobs in parallel). */
  threads?: number;
}

/** What a loaded folder provides; prompts from the folder win over the catalogue's defaults. */
interface Loaded {
  session: OrtSession;
  tokenizer: Tokenizer;
  Tensor: typeof OrtTensor;
  inputs: string[];
  output: string;
  maxLength: number;
  dimensions: number;
  pooling: Pooling;
  queryPrompt?: string;
  passagePrompt?: string;
}

/** The graph files tried, in order: the full-precision export first, as sentence-transformers and Optimum write it. */
const GRAPH_FILES = ['onnx/model.onnx', 'model.onnx', 'onnx/model_quantized.onnx', 'model_quantized.onnx'];
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

/**
 * A sentence-embedding model run locally with ONNX Runtime from a model folder an operator put
 * next to the workers — weights are never downloaded. The folder is the usual Hugging Face export
 * (BERT, MiniLM, e5, bge, gte…): the tokenizer from tokenizer.json, the encoder from the ONNX
 * graph, pooling and prompts from the sentence-transformers files when present. Vectors are
 * L2-normalised, so the dot product is the cosine.
 */
export class OnnxFolderEmbedder implements Embedder {
  readonly model: string;
  readonly similarity = 'COSINE' as const;
  readonly threshold: number;
  private loading?: Promise<Loaded>;
  private size: number;
  private closed = false;

  constructor(private readonly options: OnnxFolderEmbedderOptions) {
    this.model = options.model;
    this.threshold = options.threshold ?? 0.5;
    this.size = options.size ?? 0;
  }

  get dimensions(): number {
    return this.size;
  }

  async embedPassages(texts: string[]): Promise<number[][]> {
    if (!texts.length) return [];
    const m = await this.load();
    return this.embed(
      m,
      texts.map((t) => withPrompt(m.passagePrompt, t)),
    );
  }

  async embedQuery(text: string): Promise<number[]> {
    const m = await this.load();
    const [vector] = await this.embed(m, [withPrompt(m.queryPrompt, text)]);
    return vector as number[];
  }

  async close(): Promise<void> {
    this.closed = true;
    const loading = this.loading;
    this.loading = undefined;
    const m = await loading?.catch(() => undefined);
    await m?.session.release().catch(() => undefined);
  }

  /** Loads once; a failed load is forgotten, so a folder an operator fixes is picked up by the next job. */
  private load(): Promise<Loaded> {
    if (this.closed) return Promise.reject(new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false }));
    if (!this.loading) {
      this.loading = this.open();
      this.loading.catch(() => (this.loading = undefined));
    }
    return this.loading;
  }

  private async open(): Promise<Loaded> {
    const folder = this.options.folder;
    const unusable = (why: string) =>
      new DomainError(EMBEDDING_FAILED, `local model ${this.model} (${folder}): ${why}`, { retryable: false });
    if (!existsSync(folder)) throw unusable('the model folder does not exist');
    const json = (file: string): Record<string, unknown> | undefined => {
      const path = join(folder, file);
      if (!existsSync(path)) return undefined;
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      } catch (err) {
        throw unusable(`${file} is not valid JSON (${(err as Error).message})`);
      }
    };
    const tokenizerJson = json('tokenizer.json');
    if (!tokenizerJson) throw unusable('tokenizer.json is missing (export the model with its fast tokenizer)');
    const tokenizerConfig = json('tokenizer_config.json') ?? {};
    const config = json('config.json') ?? {};
    const graph = GRAPH_FILES.map((f) => join(folder, f)).find((p) => existsSync(p));
    if (!graph) throw unusable(`no ONNX graph (looked for ${GRAPH_FILES.join(', ')})`);

    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (err) {
      throw unusable(`tokenizer.json cannot be used: ${(err as Error).message}`);
    }
    // Loaded on first use: processes that never embed locally do not pay for the native runtime.
    const ort = await import('onnxruntime-node');
    let session: OrtSession;
    try {
      session = await ort.InferenceSession.create(graph, {
        intraOpNumThreads: this.options.threads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
    } catch (err) {
      throw unusable(`the ONNX graph cannot be loaded: ${(err as Error).message}`);
    }
    const release = (e: DomainError) => {
      void session.release().catch(() => undefined);
      return e;
    };
    const inputs = [...session.inputNames];
    const unknown = inputs.filter((i) => !KNOWN_INPUTS.has(i));
    if (!inputs.includes('input_ids') || unknown.length) {
      throw release(
        unusable(`the graph's inputs (${inputs.join(', ')}) are not those of a text encoder (input_ids, attention_mask, token_type_ids)`),
      );
    }
    const outputs = [...session.outputNames];
    const output = ['sentence_embedding', 'last_hidden_state', 'token_embeddings'].find((o) => outputs.includes(o)) ?? outputs[0];
    if (!output) throw release(unusable('the graph has no output'));

    const dimensions = typeof config['hidden_size'] === 'number' ? config['hidden_size'] : 0;
    if (this.options.size && dimensions && dimensions !== this.options.size) {
      throw release(unusable(`the model has ${dimensions} dimensions, ${this.model} has ${this.options.size}`));
    }
    const positions = typeof config['max_position_embeddings'] === 'number' ? config['max_position_embeddings'] : 512;
    const declared =
      typeof tokenizerConfig['model_max_length'] === 'number' && tokenizerConfig['model_max_length'] < 100_000
        ? tokenizerConfig['model_max_length']
        : positions;
    const st = json('config_sentence_transformers.json');
    const prompts = (st?.['prompts'] ?? {}) as Record<string, unknown>;
    const prompt = (...names: string[]) => names.map((n) => prompts[n]).find((p): p is string => typeof p === 'string' && p.length > 0);
    const pooling = poolingOf(json('1_Pooling/config.json')) ?? this.options.pooling ?? 'mean';
    if (pooling === 'unsupported') throw release(unusable('1_Pooling/config.json asks for a pooling other than CLS or mean tokens'));
    if (dimensions) this.size = dimensions;
    return {
      session,
      tokenizer,
      Tensor: ort.Tensor,
      inputs,
      output,
      maxLength: Math.max(8, Math.min(declared, positions, 512)),
      dimensions,
      pooling,
      queryPrompt: prompt('query') ?? this.options.query_prompt,
      passagePrompt: prompt('passage', 'document') ?? this.options.passage_prompt,
    };
  }

  private async embed(m: Loaded, texts: string[]): Promise<number[][]> {
    const encoded = texts.map((t) => this.encode(m, t));
    // Similar lengths batched together pad less; the answer keeps the input order.
    const order = encoded.map((_, i) => i).sort((a, b) => (encoded[a] as number[]).length - (encoded[b] as number[]).length);
    const out: number[][] = new Array(texts.length);
    const size = Math.max(1, this.options.maxBatch ?? 16);
    for (let i = 0; i < order.length; i += size) {
      const slice = order.slice(i, i + size);
      const vectors = await this.run(
        m,
        slice.map((j) => encoded[j] as number[]),
      );
      slice.forEach((j, k) => (out[j] = vectors[k] as number[]));
    }
    return out;
  }

  /** Token ids with the special tokens, cut to the model's length keeping the closing token. */
  private encode(m: Loaded, text: string): number[] {
    const ids = m.tokenizer.encode(text).ids.map(Number);
    if (ids.length <= m.maxLength) return ids;
    return [...ids.slice(0, m.maxLength - 1), ids[ids.length - 1] as number];
  }

  private async run(m: Loaded, rows: number[][]): Promise<number[][]> {
    const batch = rows.length;
    const length = Math.max(...rows.map((r) => r.length), 1);
    const ids = new BigInt64Array(batch * length);
    const mask = new BigInt64Array(batch * length);
    rows.forEach((row, b) =>
      row.forEach((id, t) => {
        ids[b * length + t] = BigInt(id);
        mask[b * length + t] = 1n;
      }),
    );
    const feeds: Record<string, OrtTensor> = {};
    for (const name of m.inputs) {
      const data = name === 'input_ids' ? ids : name === 'attention_mask' ? mask : new BigInt64Array(batch * length);
      feeds[name] = new m.Tensor('int64', data, [batch, length]);
    }
    let result: OrtSession.ReturnType;
    try {
      result = await m.session.run(feeds, [m.output]);
    } catch (err) {
      if (this.closed) throw new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false });
      throw new DomainError(EMBEDDING_FAILED, `local model ${this.model} failed: ${(err as Error).message}`, { retryable: false });
    }
    const tensor = result[m.output] as OrtTensor;
    const data = tensor.data as Float32Array;
    const dims = tensor.dims.map(Number);
    const width = dims[dims.length - 1] as number;
    if (!this.size) this.size = width;
    if (width !== this.size) {
      throw new DomainError(EMBEDDING_FAILED, `local model ${this.model} returned ${width} dimensions, expected ${this.size}`, {
        retryable: false,
      });
    }
    const vectors: number[][] = [];
    for (let b = 0; b < batch; b++) {
      const v = new Array<number>(width).fill(0);
      if (dims.length === 2) {
        for (let d = 0; d < width; d++) v[d] = data[b * width + d] as number;
      } else if (m.pooling === 'cls') {
        const base = b * length * width;
        for (let d = 0; d < width; d++) v[d] = data[base + d] as number;
      } else {
        const tokens = (rows[b] as number[]).length;
        for (let t = 0; t < tokens; t++) {
          const base = (b * length + t) * width;
          for (let d = 0; d < width; d++) v[d] = (v[d] as number) + (data[base + d] as number);
        }
        for (let d = 0; d < width; d++) v[d] = (v[d] as number) / Math.max(1, tokens);
      }
      vectors.push(l2Normalize(v));
    }
    return vectors;
  }
}

/** sentence-transformers' pooling file: CLS or mean; any other mode (max, last token…) is not supported. */
function poolingOf(config: Record<string, unknown> | undefined): Pooling | 'unsupported' | undefined {
  if (!config) return undefined;
  if (config['pooling_mode_cls_token'] === true) return 'cls';
  if (config['pooling_mode_mean_tokens'] === true) return 'mean';
  return 'unsupported';
}
