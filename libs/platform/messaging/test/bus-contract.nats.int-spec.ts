import { describeBusContract } from './bus-contract';
import { DomainError, ErrorCodes, rpc, stream } from '@kb/contracts';
import { natsHarness, sleep, waitFor, type TestBus } from './bus-harness';

describeBusContract('NATS + JetStream', natsHarness);

describe('NATS request/reply routing', () => {
  const routes = (bus: TestBus) => bus as unknown as { replies: { size: number }; cancels: { size: number } };

  it('leaves no reply or cancel route behind after answered, failed, timed-out, cancelled and streamed calls', async () => {
    const harness = await natsHarness();
    try {
      const bus = await harness.createBus();
      const id = Math.random().toString(36).slice(2);
      const get = rpc<{ ms: number }, string>(`routing${id}.thing.get`);
      const fail = rpc<object, string>(`routing${id}.thing.fail`);
      const items = stream<object, number>(`routing${id}.thing.list`);
      await bus.handle(get, async ({ ms }, _context, signal) => {
        await sleep(ms);
        return signal.aborted ? 'aborted' : 'ok';
      });
      await bus.handle(fail, async () => {
        throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'nothing here');
      });
      await bus.handleStream(items, async function* () {
        yield 1;
        yield 2;
      });
      await expect(bus.request(get, { ms: 0 })).resolves.toBe('ok');
      await expect(bus.request(fail, {})).rejects.toMatchObject({ code: ErrorCodes.RESOURCE_NOT_FOUND });
      await expect(bus.request(get, { ms: 400 }, { timeoutMs: 50 })).rejects.toMatchObject({ code: ErrorCodes.BUS_TIMEOUT });
      const caller = new AbortController();
      const cancelled = bus.request(get, { ms: 400 }, { signal: caller.signal }).catch((e: unknown) => e);
      await sleep(50);
      caller.abort();
      await cancelled;
      const seen: number[] = [];
      for await (const item of bus.requestStream(items, {})) seen.push(item);
      expect(seen).toEqual([1, 2]);
      // The handlers still running (the timed-out and the cancelled call) finish within their sleep.
      await waitFor(() => routes(bus).cancels.size === 0, 3_000, 'the handlers to finish');
      expect(routes(bus).replies.size).toBe(0);
    } finally {
      await harness.dispose();
    }
  });
});
