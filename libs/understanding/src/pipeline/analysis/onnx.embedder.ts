import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED, l2Normalize, withPrompt, type Embedder } from './embedder';
import { inLengthBatches, LoadedOnce, openOnnxFolder, type OnnxFolder } from './onnx-folder';

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
interface Loaded extends OnnxFolder {
  output: string;
  dimensions: number;
  pooling: Pooling;
  queryPrompt?: string;
  passagePrompt?: string;
}

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
  private readonly loaded: LoadedOnce<Loaded>;
  private size: number;

  constructor(private readonly options: OnnxFolderEmbedderOptions) {
    this.model = options.model;
    this.threshold = options.threshold ?? 0.5;
    this.size = options.size ?? 0;
    this.loaded = new LoadedOnce(
      () => this.open(),
      () => new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false }),
    );
  }

  get dimensions(): number {
    return this.size;
  }

  async embedPassages(texts: string[]): Promise<number[][]> {
    if (!texts.length) return [];
    const m = await this.loaded.get();
    return this.embed(
      m,
      texts.map((t) => withPrompt(m.passagePrompt, t)),
    );
  }

  async embedQuery(text: string): Promise<number[]> {
    const m = await this.loaded.get();
    const [vector] = await this.embed(m, [withPrompt(m.queryPrompt, text)]);
    return vector as number[];
  }

  close(): Promise<void> {
    return this.loaded.close();
  }

  private async open(): Promise<Loaded> {
    const folder = this.options.folder;
    const unusable = (why: string) =>
      new DomainError(EMBEDDING_FAILED, `local model ${this.model} (${folder}): ${why}`, { retryable: false });
    const f = await openOnnxFolder(folder, this.options.threads ?? 1, unusable);
    const { config, json, release } = f;
    const output = ['sentence_embedding', 'last_hidden_state', 'token_embeddings'].find((o) => f.outputs.includes(o)) ?? f.outputs[0];
    if (!output) throw release(unusable('the graph has no output'));

    const dimensions = typeof config['hidden_size'] === 'number' ? config['hidden_size'] : 0;
    if (this.options.size && dimensions && dimensions !== this.options.size) {
      throw release(unusable(`the model has ${dimensions} dimensions, ${this.model} has ${this.options.size}`));
    }
    const st = json('config_sentence_transformers.json');
    const prompts = (st?.['prompts'] ?? {}) as Record<string, unknown>;
    const prompt = (...names: string[]) => names.map((n) => prompts[n]).find((p): p is string => typeof p === 'string' && p.length > 0);
    const pooling = poolingOf(json('1_Pooling/config.json')) ?? this.options.pooling ?? 'mean';
    if (pooling === 'unsupported') throw release(unusable('1_Pooling/config.json asks for a pooling other than CLS or mean tokens'));
    if (dimensions) this.size = dimensions;
    return {
      ...f,
      output,
      dimensions,
      pooling,
      queryPrompt: prompt('query') ?? this.options.query_prompt,
      passagePrompt: prompt('passage', 'document') ?? this.options.passage_prompt,
    };
  }

  private embed(m: Loaded, texts: string[]): Promise<number[][]> {
    return inLengthBatches(
      texts.map((t) => this.encode(m, t)),
      (ids) => ids.length,
      this.options.maxBatch ?? 16,
      (rows) => this.run(m, rows),
    );
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
      if (this.loaded.isClosed) throw new DomainError(EMBEDDING_FAILED, 'embedder is closed', { retryable: false });
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
