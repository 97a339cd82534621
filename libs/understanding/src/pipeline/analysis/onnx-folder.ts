import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import type { DomainError } from '@kb/contracts';

/** The graph files tried, in order: the full-precision export first, as sentence-transformers and Optimum write it. */
const GRAPH_FILES = ['onnx/model.onnx', 'model.onnx', 'onnx/model_quantized.onnx', 'model_quantized.onnx'];
/** The inputs a BERT-family graph takes; any other input means a graph we cannot feed. */
export const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

/** A Hugging Face model folder an operator mounted, opened: its tokenizer, its ONNX session and its JSON files. */
export interface OnnxFolder {
  session: OrtSession;
  tokenizer: Tokenizer;
  Tensor: typeof OrtTensor;
  inputs: string[];
  outputs: string[];
  config: Record<string, unknown>;
  /** Tokens the model takes at most (tokenizer's declared length, position embeddings, never above 512). */
  maxLength: number;
  /** Another JSON file of the folder (undefined when absent). */
  json(file: string): Record<string, unknown> | undefined;
  /** Releases the session; returns `e`, to be thrown when the folder turns out unusable after opening. */
  release<E>(e: E): E;
}

/**
 * Opens a model folder (weights are never downloaded): tokenizer.json (+ tokenizer_config.json),
 * config.json, the first ONNX graph found, on ONNX Runtime's native threads (`threads` intra-op).
 * Every problem is reported through `unusable(why)`, which names the model for the operator.
 * The graph's inputs must be those of a BERT-family encoder.
 */
export async function openOnnxFolder(folder: string, threads: number, unusable: (why: string) => DomainError): Promise<OnnxFolder> {
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
  // Loaded on first use: processes that never run a local model do not pay for the native runtime.
  const ort = await import('onnxruntime-node');
  let session: OrtSession;
  try {
    session = await ort.InferenceSession.create(graph, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  } catch (err) {
    throw unusable(`the ONNX graph cannot be loaded: ${(err as Error).message}`);
  }
  const release = <E>(e: E): E => {
    void session.release().catch(() => undefined);
    return e;
  };
  const inputs = [...session.inputNames];
  if (!inputs.includes('input_ids') || inputs.some((i) => !KNOWN_INPUTS.has(i))) {
    throw release(
      unusable(`the graph's inputs (${inputs.join(', ')}) are not those of a text encoder (input_ids, attention_mask, token_type_ids)`),
    );
  }
  const positions = typeof config['max_position_embeddings'] === 'number' ? config['max_position_embeddings'] : 512;
  const declared =
    typeof tokenizerConfig['model_max_length'] === 'number' && tokenizerConfig['model_max_length'] < 100_000
      ? tokenizerConfig['model_max_length']
      : positions;
  return {
    session,
    tokenizer,
    Tensor: ort.Tensor,
    inputs,
    outputs: [...session.outputNames],
    config,
    maxLength: Math.max(8, Math.min(declared, positions, 512)),
    json,
    release,
  };
}

/**
 * Runs `run` over `items` in batches of at most `maxBatch`, items of similar length together (they
 * pad less), and answers in the items' order.
 */
export async function inLengthBatches<T, R>(
  items: T[],
  lengthOf: (item: T) => number,
  maxBatch: number,
  run: (batch: T[]) => Promise<R[]>,
): Promise<R[]> {
  const order = items.map((_, i) => i).sort((a, b) => lengthOf(items[a] as T) - lengthOf(items[b] as T));
  const out: R[] = new Array(items.length);
  const size = Math.max(1, maxBatch);
  for (let i = 0; i < order.length; i += size) {
    const slice = order.slice(i, i + size);
    const results = await run(slice.map((j) => items[j] as T));
    slice.forEach((j, k) => (out[j] = results[k] as R));
  }
  return out;
}

/**
 * A folder loaded once and shared by every call; a failed load is forgotten, so a folder an operator
 * fixes is picked up by the next call. After `close()`, calls fail with `closedError()`.
 */
export class LoadedOnce<T extends { session: OrtSession }> {
  private loading?: Promise<T>;
  private closed = false;

  constructor(
    private readonly open: () => Promise<T>,
    private readonly closedError: () => Error,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  get(): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.loading) {
      this.loading = this.open();
      this.loading.catch(() => (this.loading = undefined));
    }
    return this.loading;
  }

  async close(): Promise<void> {
    this.closed = true;
    const loading = this.loading;
    this.loading = undefined;
    const m = await loading?.catch(() => undefined);
    await m?.session.release().catch(() => undefined);
  }
}
