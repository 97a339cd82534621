export * from './understanding.module';
export * from './understanding.tokens';
export { DEFAULT_SANDBOX_LIMITS, readSandboxLimits, type SandboxLimits } from './pipeline/extractors/sandbox/sandbox-limits';
/** The built-in semantic model's worker, for tools that embed outside the service (the REMi benchmark). */
export { useLiteWorker, USE_LITE_MODEL } from './pipeline/analysis/use-lite.embedder';
