import type { UsageAggregation } from '@kb/contracts';

/** At most this many buckets per Get Usage request (a leap year of hours is 8 784). */
export const MAX_USAGE_BUCKETS = 10_000;

/** Start of the bucket (UTC) holding `t`, as PostgreSQL's `date_trunc` computes it (weeks start on Monday). */
export function bucketStart(t: Date, aggregation: UsageAggregation): Date {
  const y = t.getUTCFullYear();
  const m = t.getUTCMonth();
  switch (aggregation) {
    case 'hour':
      return new Date(Date.UTC(y, m, t.getUTCDate(), t.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(y, m, t.getUTCDate()));
    case 'week': {
      const sinceMonday = (t.getUTCDay() + 6) % 7;
      return new Date(Date.UTC(y, m, t.getUTCDate() - sinceMonday));
    }
    case 'month':
      return new Date(Date.UTC(y, m, 1));
    case 'quarter':
      return new Date(Date.UTC(y, m - (m % 3), 1));
    case 'year':
      return new Date(Date.UTC(y, 0, 1));
    case 'millennium': {
      // PostgreSQL's millennia start in years 1, 1001, 2001…
      const start = y - ((y - 1) % 1000);
      const d = new Date(Date.UTC(2000, 0, 1));
      d.setUTCFullYear(start);
      return d;
    }
  }
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucket(start: Date, aggregation: UsageAggregation): Date {
  const d = new Date(start);
  switch (aggregation) {
    case 'hour':
      d.setUTCHours(d.getUTCHours() + 1);
      break;
    case 'day':
      d.setUTCDate(d.getUTCDate() + 1);
      break;
    case 'week':
      d.setUTCDate(d.getUTCDate() + 7);
      break;
    case 'month':
      d.setUTCMonth(d.getUTCMonth() + 1);
      break;
    case 'quarter':
      d.setUTCMonth(d.getUTCMonth() + 3);
      break;
    case 'year':
      d.setUTCFullYear(d.getUTCFullYear() + 1);
      break;
    case 'millennium':
      d.setUTCFullYear(d.getUTCFullYear() + 1000);
      break;
  }
  return d;
}

/**
 * Starts of the buckets covering `[from, to)`, or null when there would be more than `max` (the
 * caller answers 422). Counts without building past the bound.
 */
export function bucketStarts(from: Date, to: Date, aggregation: UsageAggregation, max = MAX_USAGE_BUCKETS): Date[] | null {
  const out: Date[] = [];
  for (let b = bucketStart(from, aggregation); b < to; b = nextBucket(b, aggregation)) {
    if (out.length === max) return null;
    out.push(b);
  }
  return out;
}
