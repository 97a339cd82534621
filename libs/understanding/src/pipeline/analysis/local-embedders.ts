import { join } from 'node:path';
import type { SemanticModelInfo } from '@kb/contracts';
import { DomainError } from '@kb/contracts';
import { EMBEDDING_FAILED, type Embedder } from './embedder';
import { OnnxFolderEmbedder, type Pooling } from './onnx.embedder';

/**
 * How the well-known open models are used when their folder does not say (sentence-transformers
 * exports of e5 carry no prompts): pooling and the prompts their authors prescribe.
 */
const KNOWN: Record<string, { pooling: Pooling; query_prompt?: string; passage_prompt?: string }> = {
  'multilingual-e5-small': { pooling: 'mean', query_prompt: 'query: ', passage_prompt: 'passage: ' },
  'bge-small-en-v1.5': { pooling: 'cls', query_prompt: 'Represent this sentence for searching relevant passages: ' },
  'all-MiniLM-L6-v2': { pooling: 'mean' },
};

/** One embedder per local model per process: the ONNX session is loaded once and shared by every KB. */
const shared = new Map<string, OnnxFolderEmbedder>();

/** The folder of a local model: `<dir>/<id>`, or `<dir>/<name>` for `local:<name>`. */
export function localModelFolder(dir: string, model: string): string {
  return join(dir, model.startsWith('local:') ? model.slice('local:'.length) : model);
}

export function localEmbedder(dir: string | undefined, model: string, info: SemanticModelInfo): Embedder {
  if (!dir) return new UnavailableLocalEmbedder(model, info);
  const folder = localModelFolder(dir, model);
  let embedder = shared.get(folder);
  if (!embedder) {
    embedder = new OnnxFolderEmbedder({ model, folder, size: info.size || undefined, threshold: info.threshold, ...KNOWN[model] });
    shared.set(folder, embedder);
  }
  return embedder;
}

export async function closeLocalEmbedders(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  await Promise.all(all.map((e) => e.close().catch(() => undefined)));
}

/** Without EMBEDDING_MODEL_DIR, a local model cannot run here: every call says so (the field gets the error). */
class UnavailableLocalEmbedder implements Embedder {
  readonly similarity = 'COSINE' as const;
  readonly threshold: number;
  readonly dimensions: number;

  constructor(
    readonly model: string,
    info: SemanticModelInfo,
  ) {
    this.threshold = info.threshold;
    this.dimensions = info.size;
  }

  private fail(): never {
    throw new DomainError(
      EMBEDDING_FAILED,
      `semantic model ${this.model} runs from a local model folder, and these processing workers have none (set EMBEDDING_MODEL_DIR)`,
      {
        retryable: false,
      },
    );
  }

  async embedPassages(): Promise<number[][]> {
    this.fail();
  }

  async embedQuery(): Promise<number[]> {
    this.fail();
  }

  async close(): Promise<void> {
    // nothing to release
  }
}
