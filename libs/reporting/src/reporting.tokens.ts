export const REPORTING_DATA_SOURCE = Symbol('REPORTING_DATA_SOURCE');
export const REPORTING_OPTIONS = Symbol('REPORTING_OPTIONS');

export interface ReportingOptions {
  /** Statement time limit of an activity query (ACTIVITY_QUERY_TIMEOUT_MS). */
  activityQueryTimeoutMs: number;
}

export const DEFAULT_REPORTING_OPTIONS: ReportingOptions = { activityQueryTimeoutMs: 10_000 };
