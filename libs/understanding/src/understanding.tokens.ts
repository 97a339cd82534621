import type { OutboundHttp } from '@kb/platform/net';
import type { Embedder } from './pipeline/analysis/embedder';
import type { Ocr, Transcriber } from './pipeline/extractors/extraction.types';
import type { SandboxLimits } from './pipeline/extractors/sandbox/sandbox-limits';

export const UNDERSTANDING_OPTIONS = Symbol('UNDERSTANDING_OPTIONS');

/**
 * The semantic model of a KB. Today every KB gets the built-in one; per-KB model configuration
 * (spec 4.6) plugs in here without touching the pipeline.
 */
export type EmbedderFactory = (kbid: string) => Embedder | Promise<Embedder>;

export interface UnderstandingOptions {
  /** When false this process submits nothing and consumes no jobs (e.g. an API-only replica). */
  consumeJobs: boolean;
  /** Jobs handled at once by this process. */
  concurrency: number;
  /** Attempts before a job's field is marked ERROR. */
  maxAttempts: number;
  /**
   * How soon the job of a worker that died is handed to another (default 30 s). A live worker
   * renews its jobs while it works on them, for up to `maxJobMs`.
   */
  ackWaitMs?: number;
  /**
   * The longest one attempt may run before its job is handed to another worker. Default 6 hours:
   * up to 4 hours of media (MAX_MEDIA_SECONDS) transcribed by a local model slower than real time.
   */
  maxJobMs?: number;
  /** The server secret, from which each client's webhook signing secret is derived. */
  webhookSigningSecret?: string;
  /** Waits between webhook attempts (default WEBHOOK_BACKOFF_MS) and attempts per delivery (default 8). */
  webhookBackoffMs?: number[];
  webhookMaxAttempts?: number;
  /**
   * The guarded client for links, file URLs and webhooks. Default: the process's (outboundHttp()),
   * whose policy main.ts sets from the environment; tests pass one that reaches their local servers.
   */
  outbound?: OutboundHttp;
  /** Default: one shared built-in USE-lite embedder for every KB. */
  embedderFactory?: EmbedderFactory;
  /** Default: the KB's model configuration (KbTranscribersService). */
  transcriberFactory?: (kbid: string) => Promise<Transcriber | undefined>;
  /** Audio and video: seconds per transcription request (default 600). */
  transcriptionChunkSeconds?: number;
  /**
   * A local speech model folder (whisper.cpp's `whisper-cli` and a `ggml-*.bin` model) for KBs whose
   * model configuration names no transcription provider. Unset: such KBs cannot transcribe.
   */
  transcriptionModelDir?: string;
  /**
   * Local embedding models: a folder holding one model folder per local semantic model, named by
   * its id (`multilingual-e5-small/`, or `my-model/` for `local:my-model`), each a Hugging Face
   * ONNX export. Unset: KBs configured with a local model get a clear error per field.
   */
  embeddingModelDir?: string;
  /**
   * The cross-encoder reranker's model folder (a Hugging Face ONNX export of a sequence
   * classification model, e.g. ms-marco-MiniLM-L-6-v2). Unset: `reranker: cross-encoder` is a 422.
   */
  rerankerModelDir?: string;
  /** What one parse of an uploaded or fetched file may cost (workers, heap, time, ZIP sizes). Default DEFAULT_SANDBOX_LIMITS. */
  extractionSandbox?: SandboxLimits;
  /** Default: tesseract, started on first use. Tests pass a fake or `null` (no OCR). */
  ocrFactory?: (() => Ocr) | null;
}
