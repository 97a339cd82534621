import { Coalescer } from './coalescer';

describe('Coalescer', () => {
  it('runs an item at once when idle and batches the items that arrive while a batch runs', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const c = new Coalescer<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
      return items.map((i) => i * 10);
    });
    const first = c.submit(1);
    await new Promise((r) => setImmediate(r));
    const rest = [c.submit(2), c.submit(3), c.submit(4)];
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('batches items submitted in the same tick and honours the batch size limit', async () => {
    const batches: number[][] = [];
    const c = new Coalescer<number, number>(async (items) => (batches.push(items), items), 2);
    expect(await Promise.all([1, 2, 3].map((i) => c.submit(i)))).toEqual([1, 2, 3]);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('when a batch fails, runs each item alone so only the bad item fails', async () => {
    const c = new Coalescer<number, number>(async (items) => {
      if (items.includes(2)) throw new Error('bad item 2');
      return items;
    });
    const results = await Promise.allSettled([1, 2, 3].map((i) => c.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('bad item 2'));
  });

  it('fails every caller of a failed batch when failures are not isolated', async () => {
    let calls = 0;
    const c = new Coalescer<number, number>(
      async () => {
        calls++;
        throw new Error('down');
      },
      256,
      { isolateFailures: false },
    );
    const results = await Promise.allSettled([1, 2, 3].map((i) => c.submit(i)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(calls).toBe(1);
  });

  it('rejects every caller when the batch returns the wrong number of results', async () => {
    const c = new Coalescer<number, number>(async () => [1]);
    const results = await Promise.allSettled([c.submit(1), c.submit(2)]);
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
  });

  it('with a linger, gathers the items that arrive one by one within it into one batch', async () => {
    // A mocked clock: on a loaded machine two real 5 ms waits can outlast the 30 ms linger.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const batches: number[][] = [];
      const c = new Coalescer<number, number>(async (items) => (batches.push(items), items), 256, { lingerMs: 30 });
      const first = c.submit(1);
      await jest.advanceTimersByTimeAsync(5);
      const second = c.submit(2);
      await jest.advanceTimersByTimeAsync(5);
      expect(batches).toEqual([]); // still lingering
      const all = Promise.all([first, second, c.submit(3)]);
      await jest.advanceTimersByTimeAsync(30);
      expect(await all).toEqual([1, 2, 3]);
      expect(batches).toEqual([[1, 2, 3]]);
    } finally {
      jest.useRealTimers();
    }
  });
});
