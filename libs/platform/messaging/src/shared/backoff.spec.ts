import { backoffDelay, decideAfterFailure, resolveConsumeOptions } from './backoff';

describe('backoffDelay', () => {
  it.each([
    [[100, 200, 300], 1, 100],
    [[100, 200, 300], 2, 200],
    [[100, 200, 300], 3, 300],
    [[100, 200, 300], 7, 300],
    [[100, 200, 300], 0, 100],
    [[], 3, 0],
  ])('backoff %j after delivery %i waits %i ms', (list, count, expected) => {
    expect(backoffDelay(list, count)).toBe(expected);
  });
});

describe('resolveConsumeOptions', () => {
  it('fills defaults and ignores nonsense values', () => {
    const resolved = resolveConsumeOptions({ maxDeliver: 0, concurrency: -2, ackWaitMs: Number.NaN, backoffMs: [] });
    expect(resolved).toMatchObject({ maxDeliver: 5, concurrency: 1, ackWaitMs: 30_000 });
    expect(resolved.backoffMs.length).toBeGreaterThan(0);
  });
});

describe('decideAfterFailure', () => {
  const options = resolveConsumeOptions({ maxDeliver: 3, backoffMs: [10, 20] });

  it.each([
    [1, false, { action: 'retry', delayMs: 10 }],
    [2, false, { action: 'retry', delayMs: 20 }],
    [3, false, { action: 'dead' }],
    [1, true, { action: 'dead' }],
  ])('delivery %i (permanent=%s) -> %j', (count, permanent, expected) => {
    expect(decideAfterFailure(count, options, permanent)).toEqual(expected);
  });
});
