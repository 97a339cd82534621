export interface GateOptions {
  /** Tasks allowed to wait for a slot; past that `run` throws what `refuse` makes. Default: no bound. */
  maxWaiting?: number;
  /** The error a task is refused with when the queue is full (a 429 where a caller waits on it). */
  refuse?: () => Error;
}

/**
 * At most `size` tasks at once; the others wait their turn in order, and, when `maxWaiting` is set,
 * the ones past that are refused at once. One implementation for every bounded piece of work in the
 * services: the files a processing worker reads and parses at once, password hashing at sign-in
 * (each scrypt holds 16 MB and a libuv thread), a KB's provider calls for REMi judgements.
 */
export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly maxWaiting: number;
  private readonly refuse: () => Error;

  constructor(
    readonly size: number,
    options: GateOptions = {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('a gate needs a size of at least 1');
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
    if (!(this.maxWaiting >= 0)) throw new RangeError('maxWaiting cannot be negative');
    this.refuse = options.refuse ?? (() => new Error('too many tasks waiting'));
  }

  /**
   * Runs `task` once a slot is free. `signal` bounds the wait only (a deadline, the caller gone):
   * aborted while waiting, the task leaves the queue without running and `run` rejects with the
   * signal's reason; once started, the task owns its slot until it settles.
   */
  async run<T>(task: () => Promise<T>, options: { signal?: AbortSignal } = {}): Promise<T> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (this.running >= this.size) {
      if (this.waiting.length >= this.maxWaiting) throw this.refuse();
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener('abort', leave);
          resolve();
        };
        const leave = () => {
          const at = this.waiting.indexOf(turn);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(signal?.reason);
        };
        this.waiting.push(turn);
        signal?.addEventListener('abort', leave, { once: true });
      });
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next in line, so `running` never drops below the queue's needs.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Tasks running now and waiting (metrics, tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
