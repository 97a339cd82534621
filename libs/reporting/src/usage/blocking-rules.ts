import type { BlockableFeature, EffectiveLimits, MonthlyLimitName, UsageMetric } from '@kb/contracts';

export interface UsageTotals {
  /** This month's sums per metric, account-wide. */
  monthly: Partial<Record<string, number>>;
  /** All-time sums of the stored amounts (`resources`, `storage_bytes`) per KB. */
  perKb: Record<string, Partial<Record<string, number>>>;
}

/** Which monthly limit guards which feature, read from `limits.usage` or `limits.processing`. */
const MONTHLY_RULES: { feature: BlockableFeature; group: 'usage' | 'processing'; limit: MonthlyLimitName; metric: UsageMetric }[] = [
  { feature: 'search', group: 'usage', limit: 'monthly_limit_hosted_searches_performed', metric: 'searches_performed' },
  { feature: 'ask', group: 'usage', limit: 'monthly_limit_hosted_answers_generated', metric: 'answers_generated' },
  { feature: 'storage', group: 'usage', limit: 'monthly_limit_paragraphs_stored', metric: 'paragraphs_stored' },
  // Understanding-API keys calling the predict API for a self-hosted deployment's searches and answers (docs/usage.md).
  {
    feature: 'self_hosted_search',
    group: 'usage',
    limit: 'monthly_limit_self_hosted_searches_performed',
    metric: 'self_hosted_searches_performed',
  },
  {
    feature: 'self_hosted_ask',
    group: 'usage',
    limit: 'monthly_limit_self_hosted_answers_generated',
    metric: 'self_hosted_answers_generated',
  },
  { feature: 'processing', group: 'processing', limit: 'monthly_limit_paragraphs_processed', metric: 'paragraphs_processed' },
  { feature: 'processing', group: 'processing', limit: 'monthly_limit_chars_processed', metric: 'chars_processed' },
  { feature: 'processing', group: 'processing', limit: 'monthly_limit_docs_no_media_processed', metric: 'docs_no_media_processed' },
  { feature: 'processing', group: 'processing', limit: 'monthly_limit_media_seconds_processed', metric: 'media_seconds_processed' },
  { feature: 'processing', group: 'processing', limit: 'monthly_limit_non_media_files_processed', metric: 'non_media_files_processed' },
];

const PER_KB_RULES: { limit: MonthlyLimitName; metric: UsageMetric }[] = [
  { limit: 'storage_limit_max_resources_per_kb', metric: 'resources' },
  { limit: 'storage_limit_max_bytes_per_kb', metric: 'storage_bytes' },
];

/** A limit is reached when the amount is at or past it; -1 (or any negative) is unlimited. */
const reached = (amount: number | undefined, limit: number | undefined): boolean =>
  limit !== undefined && limit >= 0 && (amount ?? 0) >= limit;

/**
 * The blocks an account's usage calls for: features blocked account-wide (a monthly limit reached)
 * and per KB (`storage` when a KB holds as many resources or bytes as allowed). Sorted, so equal
 * decisions compare equal.
 */
export function decideBlocks(limits: EffectiveLimits, totals: UsageTotals): { features: string[]; kbs: Record<string, string[]> } {
  const features = new Set<string>();
  for (const r of MONTHLY_RULES) if (reached(totals.monthly[r.metric], limits[r.group][r.limit])) features.add(r.feature);
  const kbs: Record<string, string[]> = {};
  for (const kbid of Object.keys(totals.perKb).sort()) {
    if (PER_KB_RULES.some((r) => reached(totals.perKb[kbid]?.[r.metric], limits.usage[r.limit]))) kbs[kbid] = ['storage'];
  }
  return { features: [...features].sort(), kbs };
}
