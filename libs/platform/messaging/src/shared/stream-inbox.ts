import type { DomainError } from '@kb/contracts';

type Waiter<T> = { resolve: (result: IteratorResult<T>) => void; reject: (err: unknown) => void };

/**
 * Buffers the items of one streamed reply until the caller's iterator asks for them. The
 * transport pushes; the caller pulls with a per-item timeout (first item and every gap).
 */
export class StreamInbox<T> {
  private readonly items: T[] = [];
  private waiter?: Waiter<T>;
  private ended = false;
  private failure?: DomainError;

  get finished(): boolean {
    return this.ended || this.failure !== undefined;
  }

  push(item: T): void {
    if (this.finished) return;
    if (this.waiter) this.settle({ value: item, done: false });
    else this.items.push(item);
  }

  end(): void {
    if (this.finished) return;
    this.ended = true;
    if (this.waiter && this.items.length === 0) this.settle({ value: undefined, done: true });
  }

  fail(err: DomainError): void {
    if (this.finished) return;
    this.failure = err;
    if (this.waiter && this.items.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.reject(err);
    }
  }

  /** Next item, `done` after the end, or throws the stream's error / `onTimeout()`'s error. */
  next(timeoutMs: number, onTimeout: () => DomainError): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        const err = onTimeout();
        this.fail(err);
        reject(err);
      }, timeoutMs);
      const clear =
        <A>(fn: (arg: A) => void) =>
        (arg: A) => {
          clearTimeout(timer);
          fn(arg);
        };
      this.waiter = { resolve: clear(resolve), reject: clear(reject) };
    });
  }

  private settle(result: IteratorResult<T>): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve(result);
  }
}
