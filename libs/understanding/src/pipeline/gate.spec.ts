import { Gate } from './gate';

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Gate', () => {
  it('refuses a size below 1', () => {
    expect(() => new Gate(0)).toThrow(RangeError);
  });

  it('runs at most its size at once, the others in order, and frees a slot when a task fails', async () => {
    const gate = new Gate(2);
    let now = 0;
    let most = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      now++;
      most = Math.max(most, now);
      await tick();
      now--;
      order.push(i);
      if (i === 1) throw new Error('bad file');
      return i;
    };
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => gate.run(task(i))));
    expect(most).toBe(2);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(order.slice(2)).toEqual([2, 3, 4]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });
});
