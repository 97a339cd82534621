import { Gate } from './gate';

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Gate', () => {
  it('refuses a size below 1 and a negative queue', () => {
    expect(() => new Gate(0)).toThrow(RangeError);
    expect(() => new Gate(1.5)).toThrow(RangeError);
    expect(() => new Gate(1, { maxWaiting: -1 })).toThrow(RangeError);
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

  it('queues at most maxWaiting tasks and refuses the next with its own error, then accepts again', async () => {
    const gate = new Gate(2, { maxWaiting: 3, refuse: () => new Error('busy') });
    const releases: (() => void)[] = [];
    let active = 0;
    let peak = 0;
    const task = () =>
      new Promise<number>((resolve) => {
        active++;
        peak = Math.max(peak, active);
        releases.push(() => {
          active--;
          resolve(active);
        });
      });
    const started = Array.from({ length: 5 }, () => gate.run(task));
    await expect(gate.run(task)).rejects.toThrow('busy');
    expect(gate.load).toEqual({ running: 2, waiting: 3 });
    for (let done = 0; done < 5; done++) {
      await new Promise((r) => setImmediate(r));
      releases.shift()?.();
    }
    await Promise.all(started);
    expect(peak).toBe(2);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
    await expect(gate.run(() => Promise.resolve(7))).resolves.toBe(7);
  });

  it('with no queue refuses as soon as every slot is taken', async () => {
    const gate = new Gate(1, { maxWaiting: 0 });
    let release!: () => void;
    const first = gate.run(() => new Promise<void>((r) => (release = r)));
    await expect(gate.run(() => Promise.resolve())).rejects.toThrow('too many tasks waiting');
    release();
    await first;
    await expect(gate.run(() => Promise.resolve(1))).resolves.toBe(1);
  });

  it('lets a waiting task leave when its signal aborts, without running it or taking a slot', async () => {
    const gate = new Gate(1);
    let release!: () => void;
    const first = gate.run(() => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    let ran = false;
    const waiting = gate.run(
      async () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    const behind = gate.run(() => Promise.resolve('next'));
    expect(gate.load).toEqual({ running: 1, waiting: 2 });
    controller.abort(new Error('waited too long'));
    await expect(waiting).rejects.toThrow('waited too long');
    expect(gate.load).toEqual({ running: 1, waiting: 1 });
    release();
    await first;
    await expect(behind).resolves.toBe('next');
    expect(ran).toBe(false);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
    await expect(gate.run(() => Promise.resolve(1), { signal: AbortSignal.abort(new Error('gone')) })).rejects.toThrow('gone');
  });
});
