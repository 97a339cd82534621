import { DomainError } from '@kb/contracts';
import { Gate } from '@kb/platform/runtime';

/**
 * Runs at most `concurrency` tasks at once and keeps at most `queue` waiting; past that a task is
 * refused at once with 429. For password hashing: each scrypt holds 16 MB and tens of
 * milliseconds of a libuv thread, so a flood of sign-ins must queue briefly, then be turned away,
 * instead of pinning every core and the thread pool that file and DNS work share.
 */
export class WorkLimiter {
  private readonly gate: Gate;

  constructor(
    concurrency: number,
    private readonly queue: number,
    private readonly now: () => number = Date.now,
  ) {
    this.gate = new Gate(concurrency);
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    const { running, waiting } = this.gate.load;
    if (running >= this.gate.size && waiting >= this.queue) {
      return Promise.reject(DomainError.rateLimited('Too many sign-ins in progress; try again in a moment', 1, this.now()));
    }
    return this.gate.run(task);
  }

  get pending(): { running: number; waiting: number } {
    return this.gate.load;
  }
}
