import { ErrorCodes, event, rpc, stream } from '@kb/contracts';
import { natsHarness, sleep, waitFor, type BusHarness, type TestBus } from './bus-harness';

/**
 * What a rolling restart needs from the NATS transport (issue 22 item 4): a call made while no
 * process answers its subject waits for one (within its time limit), and a process that stops
 * hands new calls to the others while it finishes, and can still publish for, the calls it took.
 */
describe('NATS bus across a restart', () => {
  let harness: BusHarness;
  const buses: TestBus[] = [];
  let n = 0;
  const subject = (kind: string) => `restart${++n}.thing.${kind}`;
  const bus = async () => {
    const b = await harness.createBus();
    buses.push(b);
    return b;
  };

  beforeAll(async () => {
    harness = await natsHarness();
  });
  afterAll(async () => {
    await harness.dispose();
  });
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });

  it('a request sent while nobody answers is sent again until a responder starts', async () => {
    const def = rpc<{ x: number }, string>(subject('get'));
    const caller = await bus();
    const call = caller.request(def, { x: 1 }, { timeoutMs: 5_000 });
    await sleep(700);
    const responder = await bus();
    await responder.handle(def, async (p) => `late ${p.x}`);
    await expect(call).resolves.toBe('late 1');
  });

  it('a stream request sent while nobody streams is sent again until a responder starts', async () => {
    const def = stream<object, number>(subject('ask'));
    const caller = await bus();
    const items: number[] = [];
    const reading = (async () => {
      for await (const item of caller.requestStream(def, {}, { timeoutMs: 5_000 })) items.push(item);
    })();
    await sleep(700);
    const responder = await bus();
    await responder.handleStream(def, async function* () {
      yield 1;
      yield 2;
    });
    await reading;
    expect(items).toEqual([1, 2]);
  });

  it('past its time limit a request nobody took fails SERVICE_UNAVAILABLE, not BUS_TIMEOUT', async () => {
    const def = rpc<object, string>(subject('get'));
    const started = Date.now();
    await expect((await bus()).request(def, {}, { timeoutMs: 1_200 })).rejects.toMatchObject({ code: ErrorCodes.SERVICE_UNAVAILABLE });
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('a stopping process sends new requests to the other replica, finishes the ones it took and still publishes for them', async () => {
    const def = rpc<{ n: number }, string>(subject('get'));
    const done = event<{ n: number }>(subject('done'), 'AUDIT');
    const old = await bus();
    const replacement = await bus();
    const listener = await bus();
    const published: number[] = [];
    await listener.subscribe(done, async (e) => void published.push(e.n), { durable: `restart-listener-${n}` });
    let started = false;
    await old.handle(def, async (p) => {
      started = true;
      await sleep(500);
      await old.publish(done, { n: p.n });
      return `old ${p.n}`;
    });
    const first = old.request(def, { n: 1 }, { timeoutMs: 5_000 });
    await waitFor(() => started, 3_000, 'the old process to take the first call');
    await replacement.handle(def, async (p) => `new ${p.n}`);
    const stopping = old.stopConsuming();
    await sleep(50);
    // Every call after the stop goes to the replacement, while the old one still works on the first.
    for (let i = 2; i <= 6; i++) await expect(replacement.request(def, { n: i }, { timeoutMs: 5_000 })).resolves.toBe(`new ${i}`);
    await expect(first).resolves.toBe('old 1');
    await stopping;
    await waitFor(() => published.includes(1), 5_000, "the event the old process's handler published while stopping");
  });
});
