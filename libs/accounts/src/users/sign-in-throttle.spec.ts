import { FORGET_AFTER_MS, PER_EMAIL_AND_CLIENT, blockedUntil } from './sign-in-throttle';

describe('blockedUntil', () => {
  const policy = PER_EMAIL_AND_CLIENT;
  const last = 1_000_000_000;

  it('lets the free failures through, then waits twice as long after each further one, up to the cap', () => {
    expect(blockedUntil(policy, policy.free, last, last)).toBe(0);
    const waits = [1, 2, 3, 4, 5, 12, 13, 40].map((extra) => blockedUntil(policy, policy.free + extra, last, last) - last);
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, policy.maxMs, policy.maxMs, policy.maxMs]);
  });

  it('lets an attempt through once the wait has passed, and forgets a key after a day', () => {
    expect(blockedUntil(policy, policy.free + 2, last, last + 1_999)).toBe(last + 2_000);
    expect(blockedUntil(policy, policy.free + 2, last, last + 2_000)).toBe(0);
    expect(blockedUntil(policy, 1_000, last, last + FORGET_AFTER_MS + 1)).toBe(0);
  });
});
