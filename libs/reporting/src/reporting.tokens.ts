export const REPORTING_DATA_SOURCE = Symbol('REPORTING_DATA_SOURCE');
export const REPORTING_OPTIONS = Symbol('REPORTING_OPTIONS');

export interface ReportingOptions {
  /** Statement time limit of an activity query (ACTIVITY_QUERY_TIMEOUT_MS). */
  activityQueryTimeoutMs: number;
  /** Pause between two turns of the REMi scorer when it has caught up (REMI_POLL_MS); 0 stops it. */
  remiPollMs: number;
  /** Whether the REMi scorer asks for the built-in model's vectors (REMI_SEMANTIC); off: lexical support only. */
  remiSemantic: boolean;
}

export const DEFAULT_REPORTING_OPTIONS: ReportingOptions = { activityQueryTimeoutMs: 10_000, remiPollMs: 1000, remiSemantic: true };
