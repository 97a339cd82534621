export const CONTENT_DATA_SOURCE = Symbol('CONTENT_DATA_SOURCE');
export const CONTENT_OPTIONS = Symbol('CONTENT_OPTIONS');

export interface ContentOptions {
  /** Milliseconds between outbox sweeps (work left by a crash or a failed relay). */
  outboxSweepMs: number;
  /** Delay before an entry whose immediate relay failed is tried again by the sweep (default 10 s). */
  outboxFirstRetryMs?: number;
  /** When false, processing results are not consumed (maintenance / tests of queued work). */
  consumeProcessingResults: boolean;
  /** Milliseconds between VACUUM ANALYZE passes over the search tables when they changed (default 60 s; 0 = never). */
  searchMaintenanceMs?: number;
  /**
   * Search indexes held in memory (docs/decisions/0014): a budget in bytes for all KBs together
   * (0 = off: every query on SQL) and the largest KB, in paragraphs, to hold.
   */
  searchMemory?: { budgetBytes?: number; maxParagraphs?: number };
  /**
   * The approximate index kept on each vectorset's vectors (SEARCH_VECTOR_INDEX): `hnsw` (the
   * default) or `none` — no graph to maintain on every write (the bulk of an embedded build's
   * time, docs/benchmarks.md), semantic search then exact: in memory at any size, by a scan in
   * SQL otherwise. Existing HNSW indexes are left as they are.
   */
  vectorIndex?: VectorIndexKind;
  /** Milliseconds between polls of the KB export/import worker (default 2 s; 0 = no worker, jobs run by `drain`). */
  transferPollMs?: number;
  /** Bounds of archives read by imports (docs/export-format.md); the defaults suit production. */
  archiveLimits?: Partial<import('./transfer/archive-format').ArchiveLimits>;
}

export const VECTOR_INDEX_KINDS = ['hnsw', 'none'] as const;
export type VectorIndexKind = (typeof VECTOR_INDEX_KINDS)[number];

/** Whether vectorsets get an HNSW index (ContentOptions.vectorIndex, `hnsw` unless set). */
export function keepsHnswIndex(options: Pick<ContentOptions, 'vectorIndex'> | undefined): boolean {
  return (options?.vectorIndex ?? 'hnsw') === 'hnsw';
}
