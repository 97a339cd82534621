import { basename } from 'node:path';
import type { InferenceSession as OrtSession, Tensor as OrtTensor } from 'onnxruntime-node';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { inLengthBatches, LoadedOnce, openOnnxFolder, type OnnxFolder } from '../pipeline/analysis/onnx-folder';

export interface OnnxCrossEncoderOptions {
  /** A Hugging Face cross-encoder folder: tokenizer.json, an ONNX graph (onnx/model.onnx or model.onnx), config.json. */
  folder: string;
  /** Pairs per inference call; default 16. */
  maxBatch?: number;
  /** ONNX Runtime intra-op threads; default 1. */
  threads?: number;
}

interface Loaded extends OnnxFolder {
  output: string;
}

/**
 * A cross-encoder reranker run locally with ONNX Runtime from a model folder an operator mounts
 * (weights are never downloaded): the usual Hugging Face export of a sequence-classification model
 * (ms-marco MiniLM, bge-reranker…). Query and passage are encoded together as a pair; the score is
 * the sigmoid of the single logit (or the softmax of the second of two labels), in [0, 1].
 * Inference runs on ONNX Runtime's native threads, not on the event loop.
 */
export class OnnxCrossEncoder {
  readonly model: string;
  private readonly loaded: LoadedOnce<Loaded>;

  constructor(private readonly options: OnnxCrossEncoderOptions) {
    this.model = basename(options.folder);
    this.loaded = new LoadedOnce(
      () => this.open(),
      () => this.failed('the reranker is closed'),
    );
  }

  /** One score per passage, in the passages' order. */
  async score(query: string, passages: string[]): Promise<number[]> {
    if (!passages.length) return [];
    const m = await this.loaded.get();
    return inLengthBatches(
      passages.map((p) => this.encode(m, query, p)),
      (pair) => pair.ids.length,
      this.options.maxBatch ?? 16,
      (pairs) => this.run(m, pairs),
    );
  }

  close(): Promise<void> {
    return this.loaded.close();
  }

  private failed(why: string): DomainError {
    return new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `cross-encoder reranker ${this.model} (${this.options.folder}): ${why}`, {
      retryable: false,
    });
  }

  private async open(): Promise<Loaded> {
    const f = await openOnnxFolder(this.options.folder, this.options.threads ?? 1, (why) => this.failed(why));
    const output = f.outputs.includes('logits') ? 'logits' : f.outputs[0];
    if (!output) throw f.release(this.failed(`the graph has no output`));
    return { ...f, output };
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
      throw this.failed(this.loaded.isClosed ? 'the reranker is closed' : `inference failed: ${(err as Error).message}`);
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
