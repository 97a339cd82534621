import { ErrorCodes } from '@kb/contracts';
import { WorkLimiter } from './work-limiter';

describe('WorkLimiter', () => {
  it('runs at most `concurrency` tasks at once, queues `queue` more and refuses the rest with 429', async () => {
    const limiter = new WorkLimiter(2, 3, () => 10_000);
    let active = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const task = () =>
      new Promise<number>((resolve) => {
        active++;
        peak = Math.max(peak, active);
        releases.push(() => {
          active--;
          resolve(active);
        });
      });
    const started = Array.from({ length: 5 }, () => limiter.run(task));
    await expect(limiter.run(task)).rejects.toMatchObject({ code: ErrorCodes.RATE_LIMITED, details: { try_after: 11 } });
    expect(limiter.pending).toEqual({ running: 2, waiting: 3 });
    for (let done = 0; done < 5; done++) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(started);
    expect(peak).toBe(2);
    expect(limiter.pending).toEqual({ running: 0, waiting: 0 });
  });

  it('frees its slot when a task fails', async () => {
    const limiter = new WorkLimiter(1, 0);
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(() => Promise.resolve(1))).resolves.toBe(1);
  });
});
