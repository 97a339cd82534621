interface Waiter<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for single-row statements. `submit` runs `runBatch` for the item; while one batch
 * is running, items submitted meanwhile wait and then go together in the next batch. Idle, an item
 * runs at once (one microtask later, so items submitted in the same tick share a batch). Under
 * load, N concurrent callers cost one statement instead of N: on a database that runs one
 * statement at a time (the embedded one) the wait is no longer than it would have been anyway.
 *
 * If a batch of several items fails, each item is run alone, so one bad item fails only its caller
 * (unless `isolateFailures` is off: then every caller of the batch gets its error).
 */
export class Coalescer<I, R> {
  private waiting: Waiter<I, R>[] = [];
  private running = false;

  constructor(
    /** Runs the items; resolves to one result per item, in order. */
    private readonly runBatch: (items: I[]) => Promise<R[]>,
    private readonly maxBatch = 256,
    /**
     * `lingerMs`: idle, the first item waits this long for others before its batch runs (a few
     * milliseconds of latency for far fewer, larger statements when items come one by one, as
     * events do from a queue).
     */
    private readonly options: { isolateFailures?: boolean; lingerMs?: number } = {},
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        const linger = this.options.lingerMs ?? 0;
        if (linger > 0) setTimeout(() => void this.drain(), linger);
        else queueMicrotask(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          this.settle(batch, await this.runBatch(batch.map((w) => w.item)));
        } catch (err) {
          if (batch.length === 1 || this.options.isolateFailures === false) for (const w of batch) w.reject(err);
          else await Promise.all(batch.map((w) => this.runBatch([w.item]).then((r) => this.settle([w], r), w.reject)));
        }
      }
    } finally {
      this.running = false;
    }
  }

  private settle(batch: Waiter<I, R>[], results: R[]): void {
    if (results.length !== batch.length) {
      const err = new Error(`Coalescer: ${results.length} results for ${batch.length} items`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i] as R));
  }
}
