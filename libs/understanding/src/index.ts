export * from './understanding.module';
export * from './understanding.tokens';
export * from './processing-capacity';
export { DEFAULT_SANDBOX_LIMITS, readSandboxLimits, type SandboxLimits } from './pipeline/extractors/sandbox/sandbox-limits';
/** The built-in semantic model's worker, for tools that embed outside the service (the REMi benchmark). */
export { configureUseLitePool, useLiteWorker, USE_LITE_MODEL } from './pipeline/analysis/use-lite.embedder';
/** The tokenizer fix the built-in model's worker installs, for benchmarks that run the model alone. */
export { USE_LITE_TOKENIZER_SOURCE } from './pipeline/analysis/use-lite-tokenizer.source';
export {
  defaultEmbeddingWorkers,
  EMBEDDING_ENGINES,
  MAX_EMBEDDING_WORKERS,
  USE_LITE_BATCH,
  UseLitePool,
  type EmbeddingEngine,
} from './pipeline/analysis/use-lite-pool';
