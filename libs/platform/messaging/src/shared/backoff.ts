import type { ConsumeOptions } from '../message-bus';

export const DEFAULT_MAX_DELIVER = 5;
export const DEFAULT_ACK_WAIT_MS = 30_000;
export const DEFAULT_BACKOFF_MS: readonly number[] = [1_000, 5_000, 30_000, 120_000];

export interface ResolvedConsumeOptions {
  durable?: string;
  maxDeliver: number;
  backoffMs: readonly number[];
  ackWaitMs: number;
  /** At least `ackWaitMs`. */
  maxWorkingMs: number;
  concurrency: number;
}

export function resolveConsumeOptions(options: ConsumeOptions = {}): ResolvedConsumeOptions {
  const positive = (value: number | undefined, fallback: number): number =>
    value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
  const ackWaitMs = positive(options.ackWaitMs, DEFAULT_ACK_WAIT_MS);
  return {
    durable: options.durable,
    maxDeliver: positive(options.maxDeliver, DEFAULT_MAX_DELIVER),
    backoffMs: options.backoffMs && options.backoffMs.length > 0 ? options.backoffMs.map((ms) => Math.max(0, ms)) : DEFAULT_BACKOFF_MS,
    ackWaitMs,
    maxWorkingMs: Math.max(ackWaitMs, positive(options.maxWorkingMs, ackWaitMs)),
    concurrency: positive(options.concurrency, 1),
  };
}

/**
 * Delay before the next delivery after delivery `deliveryCount` failed: delivery n (1-based)
 * failing waits `backoffMs[n - 1]`, and the last value repeats for later attempts.
 */
export function backoffDelay(backoffMs: readonly number[], deliveryCount: number): number {
  if (backoffMs.length === 0) return 0;
  const index = Math.min(Math.max(deliveryCount, 1), backoffMs.length) - 1;
  return backoffMs[index] ?? 0;
}

/**
 * What to do after a delivery: retry with a delay, or give up. Payloads that fail validation
 * are dead-lettered at once because a retry would fail the same way.
 */
export type FailureDecision = { action: 'retry'; delayMs: number } | { action: 'dead' };

export function decideAfterFailure(deliveryCount: number, options: ResolvedConsumeOptions, permanent: boolean): FailureDecision {
  if (permanent || deliveryCount >= options.maxDeliver) return { action: 'dead' };
  return { action: 'retry', delayMs: backoffDelay(options.backoffMs, deliveryCount) };
}
