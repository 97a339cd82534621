import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { DomainError, ErrorCodes } from '@kb/contracts';

export interface OnnxCrossEncoderOptions {
  /** A Hugging Face cross-encoder folder: tokenizer.json, an ONNX graph (onnx/model.onnx or model.onnx), config.json. */
  folder: string;
  /** Pairs per inference call; default 16. */
  maxBatch?: number;
  /** ONNX Runtime intra-op threads; default 1. */
  threads?: number;
}

interface Loaded {
  session: OrtSession;
  tokenizer: Tokenizer;
  Tensor: typeof OrtTensor;
  inputs: string[];
  output: string;
  maxLength: number;
}

const GRAPH_FILES = ['onnx/model.onnx', 'model.onnx', 'onnx/model_quantized.onnx', 'model_quantized.onnx'];
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

/**
 * A cross-encoder reranker run locally with ONNX Runtime from a model folder an operator mounts
 * (weights are never downloaded): the usual Hugging Face export of a sequence-classification model
 * (ms-marco MiniLM, bge-reranker…). Query and passage are encoded together as a pair; the score is
 * the sigmoid of the single logit (or the softmax of the second of two labels), in [0, 1].
 * Inference runs on ONNX Runtime's native threads, not on the event loop.
 */
export class OnnxCrossEncoder {
  readonly model: string;
  private loading?: Promise<Loaded>;
  private closed = false;

  constructor(private readonly options: OnnxCrossEncoderOptions) {
    this.model = basename(options.folder);
  }

  /** One score per passage, in the passages' order. */
  async score(query: string, passages: string[]): Promise<number[]> {
    if (!passages.length) return [];
    const m = await this.load();
    const encoded = passages.map((p) => this.encode(m, query, p));
    // Similar lengths batched together pad less; the answer keeps the input order.
    const order = encoded.map((_, i) => i).sort((a, b) => (encoded[a] as Pair).ids.length - (encoded[b] as Pair).ids.length);
    const out: number[] = new Array(passages.length);
    const size = Math.max(1, this.options.maxBatch ?? 16);
    for (let i = 0; i < order.length; i += size) {
      const slice = order.slice(i, i + size);
      const scores = await this.run(
        m,
        slice.map((j) => encoded[j] as Pair),
      );
      slice.forEach((j, k) => (out[j] = scores[k] as number));
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    const loading = this.loading;
    this.loading = undefined;
    const m = await loading?.catch(() => undefined);
    await m?.session.release().catch(() => undefined);
  }

  /** Loads once; a failed load is forgotten, so a folder an operator fixes is picked up by the next call. */
  private load(): Promise<Loaded> {
    if (this.closed) return Promise.reject(this.failed('the reranker is closed'));
    if (!this.loading) {
      this.loading = this.open();
      this.loading.catch(() => (this.loading = undefined));
    }
    return this.loading;
  }

  private failed(why: string): DomainError {
    return new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `cross-encoder reranker ${this.model} (${this.options.folder}): ${why}`, {
      retryable: false,
    });
  }

  private async open(): Promise<Loaded> {
    const folder = this.options.folder;
    if (!existsSync(folder)) throw this.failed('the model folder does not exist');
    const json = (file: string): Record<string, unknown> | undefined => {
      const path = join(folder, file);
      if (!existsSync(path)) return undefined;
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      } catch (err) {
        throw this.failed(`${file} is not valid JSON (${(err as Error).message})`);
      }
    };
    const tokenizerJson = json('tokenizer.json');
    if (!tokenizerJson) throw this.failed('tokenizer.json is missing (export the model with its fast tokenizer)');
    const tokenizerConfig = json('tokenizer_config.json') ?? {};
    const config = json('config.json') ?? {};
    const graph = GRAPH_FILES.map((f) => join(folder, f)).find((p) => existsSync(p));
    if (!graph) throw this.failed(`no ONNX graph (looked for ${GRAPH_FILES.join(', ')})`);
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (err) {
      throw this.failed(`tokenizer.json cannot be used: ${(err as Error).message}`);
    }
    const ort = await import('onnxruntime-node');
    let session: OrtSession;
    try {
      session = await ort.InferenceSession.create(graph, {
        intraOpNumThreads: this.options.threads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
    } catch (err) {
      throw this.failed(`the ONNX graph cannot be loaded: ${(err as Error).message}`);
    }
    const inputs = [...session.inputNames];
    const outputs = [...session.outputNames];
    const output = outputs.includes('logits') ? 'logits' : outputs[0];
    if (!inputs.includes('input_ids') || inputs.some((i) => !KNOWN_INPUTS.has(i)) || !output) {
      void session.release().catch(() => undefined);
      throw this.failed(`the graph's inputs (${inputs.join(', ')}) and outputs (${outputs.join(', ')}) are not those of a cross-encoder`);
    }
    const positions = typeof config['max_position_embeddings'] === 'number' ? config['max_position_embeddings'] : 512;
    const declared =
      typeof tokenizerConfig['model_max_length'] === 'number' && tokenizerConfig['model_max_length'] < 100_000
        ? tokenizerConfig['model_max_length']
        : positions;
    return { session, tokenizer, Tensor: ort.Tensor, inputs, output, maxLength: Math.max(8, Math.min(declared, positions, 512)) };
  }

  /** The pair's token ids and types, cut to the model's length keeping the closing token (the passage, second, is cut first). */
  private encode(m: Loaded, query: string, passage: string): Pair {
    const e = m.tokenizer.encode(query, { text_pair: passage, return_token_type_ids: true });
    const ids = e.ids.map(Number);
    const types = (e.token_type_ids ?? []).map(Number);
    if (ids.length <= m.maxLength) return { ids, types };
    const cut = (xs: number[]) => [...xs.slice(0, m.maxLength - 1), xs[xs.length - 1] ?? 0];
    return { ids: cut(ids), types: types.length ? cut(types) : [] };
  }

  private async run(m: Loaded, rows: Pair[]): Promise<number[]> {
    const batch = rows.length;
    const length = Math.max(...rows.map((r) => r.ids.length), 1);
    const ids = new BigInt64Array(batch * length);
    const mask = new BigInt64Array(batch * length);
    const types = new BigInt64Array(batch * length);
    rows.forEach((row, b) =>
      row.ids.forEach((id, t) => {
        ids[b * length + t] = BigInt(id);
        mask[b * length + t] = 1n;
        types[b * length + t] = BigInt(row.types[t] ?? 0);
      }),
    );
    const feeds: Record<string, OrtTensor> = {};
    for (const name of m.inputs) {
      const data = name === 'input_ids' ? ids : name === 'attention_mask' ? mask : types;
      feeds[name] = new m.Tensor('int64', data, [batch, length]);
    }
    let result: OrtSession.ReturnType;
    try {
      result = await m.session.run(feeds, [m.output]);
    } catch (err) {
      throw this.failed(this.closed ? 'the reranker is closed' : `inference failed: ${(err as Error).message}`);
    }
    const tensor = result[m.output] as OrtTensor;
    const data = tensor.data as Float32Array;
    const labels = tensor.dims.length >= 2 ? Number(tensor.dims[tensor.dims.length - 1]) : 1;
    if (data.length !== batch * labels || labels < 1 || labels > 2)
      throw this.failed(`the graph's output has shape [${tensor.dims.join(', ')}]`);
    const scores: number[] = [];
    for (let b = 0; b < batch; b++) {
      // One logit: its sigmoid; two labels (irrelevant, relevant): the softmax of the second.
      const logit = labels === 1 ? (data[b] as number) : (data[b * 2 + 1] as number) - (data[b * 2] as number);
      scores.push(1 / (1 + Math.exp(-logit)));
    }
    return scores;
  }
}

interface Pair {
  ids: number[];
  types: number[];
}
