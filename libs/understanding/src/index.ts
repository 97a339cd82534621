export * from './understanding.module';
export * from './understanding.tokens';
export { DEFAULT_SANDBOX_LIMITS, readSandboxLimits, type SandboxLimits } from './pipeline/extractors/sandbox/sandbox-limits';
