import { DomainError, ErrorCodes } from '@kb/contracts';

/**
 * Runs at most `concurrency` tasks at once and keeps at most `queue` waiting; past that a task is
 * refused at once with 429. For password hashing: each scrypt holds 16 MB and tens of
 * milliseconds of a libuv thread, so a flood of sign-ins must queue briefly, then be turned away,
 * instead of pinning every core and the thread pool that file and DNS work share.
 */
export class WorkLimiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
    private readonly now: () => number = Date.now,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        throw new DomainError(ErrorCodes.RATE_LIMITED, 'Too many sign-ins in progress; try again in a moment', {
          try_after: Math.ceil(this.now() / 1000) + 1,
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (running stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  get pending(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
