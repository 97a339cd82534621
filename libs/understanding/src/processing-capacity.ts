import {
  defaultEmbeddingWorkers,
  EMBEDDING_ENGINES,
  MAX_EMBEDDING_WORKERS,
  USE_LITE_BATCH,
  type EmbeddingEngine,
} from './pipeline/analysis/use-lite-pool';

interface IntReader {
  int(name: string, fallback: number, range?: { min?: number; max?: number }): number;
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T;
}

/** How much processing one understanding process runs at once (docs/operations.md "Every setting"). */
export interface ProcessingCapacity {
  /** EMBEDDING_WORKERS: worker threads of the built-in model, each with its own copy (default one per core). */
  embeddingWorkers: number;
  /** EMBEDDING_ENGINE: what runs the built-in model in those workers (default onnx; tfjs is the reference). */
  embeddingEngine: EmbeddingEngine;
  /** PROCESSING_CONCURRENCY: jobs taken from the queue at once (default sized to the embedding workers). */
  concurrency: number;
}

/**
 * Jobs at once that keep every embedding worker on full batches: one batch each being embedded and
 * one more being analysed, stored or acknowledged meanwhile (text jobs mostly hold one paragraph).
 */
export function defaultProcessingConcurrency(embeddingWorkers: number): number {
  return Math.min(64, embeddingWorkers * USE_LITE_BATCH * 2);
}

export function readProcessingCapacity(reader: IntReader): ProcessingCapacity {
  const embeddingWorkers = reader.int('EMBEDDING_WORKERS', defaultEmbeddingWorkers(), { min: 1, max: MAX_EMBEDDING_WORKERS });
  const embeddingEngine = reader.oneOf('EMBEDDING_ENGINE', EMBEDDING_ENGINES, 'onnx');
  const concurrency = reader.int('PROCESSING_CONCURRENCY', defaultProcessingConcurrency(embeddingWorkers), { min: 1, max: 64 });
  return { embeddingWorkers, embeddingEngine, concurrency };
}
