/**
 * At most `size` tasks at once; the others wait their turn in order. Processing takes many jobs at
 * once to keep the model workers on full batches, but a file or page is read into memory (up to
 * 100 MB) and parsed by a few sandbox processes: the jobs that read one go through this gate.
 */
export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('a gate needs a size of at least 1');
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
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
