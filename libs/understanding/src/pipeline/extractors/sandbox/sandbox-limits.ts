import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../zip-check';

/** What one parse of untrusted bytes may cost; every parser runs in a worker process held to these. */
export interface SandboxLimits {
  /** Parsing workers kept by the process; jobs beyond them wait their turn. */
  workers: number;
  /** Wall time of one parse; past it the worker is killed and the field fails TOO_LARGE. */
  timeoutMs: number;
  /** V8 old-generation heap of each worker process (`--max-old-space-size`), and of the PDF thread in it. */
  maxMemoryMb: number;
  /** V8 young-generation heap of each worker (three semi-spaces) and of the PDF thread. */
  maxYoungMemoryMb: number;
  /** JavaScript stack of the PDF (and, in specs, Readability) worker threads; processes keep V8's default. */
  stackSizeMb: number;
  /** What a ZIP container (DOCX, XLSX, PPTX) may declare and inflate to. */
  zip: ZipLimits;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  workers: 2,
  timeoutMs: 120_000,
  maxMemoryMb: 1024,
  maxYoungMemoryMb: 64,
  stackSizeMb: 4,
  zip: DEFAULT_ZIP_LIMITS,
};

/** The subset of EnvReader used here, so the understanding library does not depend on platform/config. */
interface IntReader {
  int(name: string, fallback: number, range?: { min?: number; max?: number }): number;
}

/**
 * The sandbox's limits from the environment (called by the apps' main.ts; see docs/operations.md):
 * EXTRACTION_WORKERS, EXTRACTION_TIMEOUT_MS, EXTRACTION_MAX_MEMORY_MB, EXTRACTION_ZIP_MAX_ENTRIES,
 * EXTRACTION_ZIP_MAX_UNCOMPRESSED_MB, EXTRACTION_ZIP_MAX_RATIO.
 */
export function readSandboxLimits(reader: IntReader): SandboxLimits {
  const d = DEFAULT_SANDBOX_LIMITS;
  return {
    ...d,
    workers: reader.int('EXTRACTION_WORKERS', d.workers, { min: 1, max: 64 }),
    timeoutMs: reader.int('EXTRACTION_TIMEOUT_MS', d.timeoutMs, { min: 1_000, max: 3_600_000 }),
    maxMemoryMb: reader.int('EXTRACTION_MAX_MEMORY_MB', d.maxMemoryMb, { min: 64, max: 65_536 }),
    zip: {
      ...d.zip,
      maxEntries: reader.int('EXTRACTION_ZIP_MAX_ENTRIES', d.zip.maxEntries, { min: 1 }),
      maxUncompressedBytes:
        reader.int('EXTRACTION_ZIP_MAX_UNCOMPRESSED_MB', d.zip.maxUncompressedBytes / 1024 / 1024, { min: 1, max: 65_536 }) * 1024 * 1024,
      maxRatio: reader.int('EXTRACTION_ZIP_MAX_RATIO', d.zip.maxRatio, { min: 1 }),
    },
  };
}
