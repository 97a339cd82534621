/**
 * Default quotas by account type; an account's own `limits` override them member by member.
 * -1 means unlimited. Sizes in bytes, media in seconds.
 */
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const MONTHLY = {
  monthly_limit_paragraphs_processed: 1_000_000,
  monthly_limit_docs_no_media_processed: 10_000,
  monthly_limit_media_seconds_processed: 36_000,
  monthly_limit_paragraphs_stored: 2_000_000,
  monthly_limit_hosted_searches_performed: 100_000,
  monthly_limit_hosted_answers_generated: 10_000,
  monthly_limit_self_hosted_searches_performed: -1,
  monthly_limit_self_hosted_answers_generated: -1,
  storage_limit_max_bytes_per_kb: 50 * GiB,
  storage_limit_max_resources_per_kb: 100_000,
  monthly_limit_non_media_files_processed: 10_000,
  monthly_limit_chars_processed: 1_000_000_000,
};

export interface AccountLimits {
  upload: { upload_limit_max_media_file_size: number; upload_limit_max_non_media_file_size: number };
  usage: typeof MONTHLY;
  processing: typeof MONTHLY;
}

export const DEFAULT_LIMITS: AccountLimits = {
  upload: { upload_limit_max_media_file_size: 5 * GiB, upload_limit_max_non_media_file_size: 500 * MiB },
  usage: MONTHLY,
  processing: MONTHLY,
};

/**
 * The account made at the first start belongs to the operator of the deployment: no monthly or
 * storage ceiling (upload sizes keep their defaults). Accounts created later get their type's.
 */
export function operatorLimits(): Record<string, unknown> {
  const unlimited = Object.fromEntries(Object.keys(MONTHLY).map((k) => [k, -1]));
  return { usage: { ...unlimited }, processing: { ...unlimited } };
}

type Overrides = { [K in keyof AccountLimits]?: Partial<AccountLimits[K]> };

export function effectiveLimits(overrides: Record<string, unknown> | null | undefined): AccountLimits {
  const o = (overrides ?? {}) as Overrides;
  return {
    upload: { ...DEFAULT_LIMITS.upload, ...(o.upload ?? {}) },
    usage: { ...DEFAULT_LIMITS.usage, ...(o.usage ?? {}) },
    processing: { ...DEFAULT_LIMITS.processing, ...(o.processing ?? {}) },
  };
}
