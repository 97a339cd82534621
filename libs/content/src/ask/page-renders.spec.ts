import { PageImageCache, PageRenderGates, RenderBusy, type PageKey } from './page-renders';

const key = (over: Partial<PageKey> = {}): PageKey => ({ kbid: 'kb1', rid: 'r1', fieldId: 'doc', page: 1, generation: '7@1', ...over });
const image = (bytes: number, tag = 'x') => ({ mediaType: 'image/png', data: tag.repeat(bytes) });

describe('PageRenderGates', () => {
  it('runs at most perKb renders of one KB at once while another KB renders alongside', async () => {
    const gates = new PageRenderGates(1, 60_000);
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const releases: (() => void)[] = [];
    const render = (kbid: string) => () =>
      new Promise<string>((resolve) => {
        running.set(kbid, (running.get(kbid) ?? 0) + 1);
        peak.set(kbid, Math.max(peak.get(kbid) ?? 0, running.get(kbid) as number));
        releases.push(() => {
          running.set(kbid, (running.get(kbid) as number) - 1);
          resolve(kbid);
        });
      });
    const all = [...Array.from({ length: 4 }, () => gates.run('kbA', render('kbA'))), gates.run('kbB', render('kbB'))];
    await new Promise((r) => setImmediate(r));
    // kbA holds one render and queues three; kbB is not behind them.
    expect(running.get('kbA')).toBe(1);
    expect(running.get('kbB')).toBe(1);
    expect(gates.load('kbA')).toEqual({ running: 1, waiting: 3 });
    while (releases.length) {
      releases.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(peak.get('kbA')).toBe(1);
    // Idle KBs keep no gate.
    expect(gates.load('kbA')).toEqual({ running: 0, waiting: 0 });
    expect((gates as unknown as { gates: Map<string, unknown> }).gates.size).toBe(0);
  });

  it('gives up waiting after waitMs with RenderBusy, without running the render', async () => {
    const gates = new PageRenderGates(1, 50);
    let release!: () => void;
    const first = gates.run('kbA', () => new Promise<void>((r) => (release = r)));
    let ran = false;
    await expect(
      gates.run('kbA', async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(RenderBusy);
    expect(ran).toBe(false);
    expect(gates.load('kbA')).toEqual({ running: 1, waiting: 0 });
    release();
    await first;
  });

  it("rethrows the caller's abort rather than RenderBusy", async () => {
    const gates = new PageRenderGates(1, 60_000);
    let release!: () => void;
    const first = gates.run('kbA', () => new Promise<void>((r) => (release = r)));
    const caller = new AbortController();
    const second = gates.run('kbA', () => Promise.resolve(), caller.signal);
    caller.abort(new Error('caller gone'));
    await expect(second).rejects.toThrow('caller gone');
    release();
    await first;
  });
});

describe('PageImageCache', () => {
  it('hits on the same page and generation, misses on another page, KB or generation', () => {
    const cache = new PageImageCache(10_000);
    cache.set(key(), image(100));
    expect(cache.get(key())?.data).toHaveLength(100);
    expect(cache.get(key({ page: 2 }))).toBeUndefined();
    expect(cache.get(key({ kbid: 'kb2' }))).toBeUndefined();
    expect(cache.get(key({ generation: '8@2' }))).toBeUndefined();
  });

  it('a newer generation of a page replaces the older one (a reprocess invalidates)', () => {
    const cache = new PageImageCache(10_000);
    cache.set(key(), image(100, 'o'));
    cache.set(key({ page: 2 }), image(100, 'p'));
    cache.set(key({ generation: '8@2' }), image(50, 'n'));
    expect(cache.get(key())).toBeUndefined();
    expect(cache.get(key({ generation: '8@2' }))?.data).toBe('n'.repeat(50));
    expect(cache.get(key({ page: 2 }))?.data).toBe('p'.repeat(100));
    expect(cache.size.entries).toBe(2);
  });

  it('keeps its bytes within the budget, evicting the least recently used first', () => {
    const cache = new PageImageCache(3 * (1000 + 'image/png'.length));
    for (const page of [1, 2, 3]) cache.set(key({ page }), image(1000));
    expect(cache.get(key({ page: 1 }))).toBeDefined(); // page 1 now the most recently used
    cache.set(key({ page: 4 }), image(1000));
    expect(cache.get(key({ page: 2 }))).toBeUndefined();
    for (const page of [1, 3, 4]) expect(cache.get(key({ page }))).toBeDefined();
    expect(cache.size.bytes).toBeLessThanOrEqual(cache.budget);
    cache.set(key({ page: 5 }), image(2500));
    expect(cache.size.bytes).toBeLessThanOrEqual(cache.budget);
    expect(cache.get(key({ page: 5 }))).toBeDefined();
    // An image larger than the whole budget is not kept and evicts nothing.
    const before = cache.size;
    cache.set(key({ page: 6 }), image(10_000));
    expect(cache.get(key({ page: 6 }))).toBeUndefined();
    expect(cache.size).toEqual(before);
  });
});
