export const REPORTING_DATA_SOURCE = Symbol('REPORTING_DATA_SOURCE');
export const REPORTING_OPTIONS = Symbol('REPORTING_OPTIONS');

export interface ReportingOptions {
  /** Statement time limit of an activity query (ACTIVITY_QUERY_TIMEOUT_MS). */
  activityQueryTimeoutMs: number;
  /** How often blocked accounts are decided again, for the turn of the month (USAGE_BLOCKING_SWEEP_MS). */
  blockingSweepMs: number;
  /** How long an account's limits are reused before they are asked for again (USAGE_LIMITS_CACHE_MS). */
  limitsCacheMs: number;
  /** Pause between two turns of the REMi scorer when it has caught up (REMI_POLL_MS); 0 stops it. */
  remiPollMs: number;
  /** Whether the REMi scorer asks for the built-in model's vectors (REMI_SEMANTIC); off: lexical support only. */
  remiSemantic: boolean;
  /** Whether answers of KBs with a generative provider are graded by that model (REMI_JUDGE); off: always the offline scorer. */
  remiJudge: boolean;
  /** Longest wait for one judge answer (REMI_JUDGE_TIMEOUT_MS); past it the answer is scored offline. */
  remiJudgeTimeoutMs: number;
  /** Judge calls a reporting process has in flight at once (REMI_JUDGE_CONCURRENCY). */
  remiJudgeConcurrency: number;
  /** Pause between two turns of the activity log's sealer once it has caught up (ACTIVITY_CHAIN_SEAL_MS); 0 stops it. */
  chainSealMs: number;
  /** Pause between two looks for activity downloads to prepare (a request also starts one at once); 0 stops the worker. */
  downloadPollMs: number;
  /** SMTP for the e-mail notice of a ready download (SMTP_URL, SMTP_FROM); without it `notify_via_email: true` is refused. */
  smtp?: { url: string; from: string };
}

export const DEFAULT_REPORTING_OPTIONS: ReportingOptions = {
  activityQueryTimeoutMs: 10_000,
  blockingSweepMs: 60_000,
  limitsCacheMs: 60_000,
  remiPollMs: 1000,
  remiSemantic: true,
  remiJudge: true,
  remiJudgeTimeoutMs: 60_000,
  remiJudgeConcurrency: 2,
  chainSealMs: 1000,
  downloadPollMs: 5000,
};
