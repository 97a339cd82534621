import { Test } from '@nestjs/testing';
import { event, queue, rpc } from '@kb/contracts';
import { createMessageBus } from '../src/create-message-bus';
import { InProcessMessageBus } from '../src/inprocess/in-process-bus';
import { MemoryQueueStore } from '../src/inprocess/memory-queue-store';
import { MESSAGE_BUS, type MessageBus } from '../src/message-bus';
import { MessagingModule } from '../src/messaging.module';
import { silentLogger } from '../src/shared/bus-logger';
import { sleep, waitFor } from './bus-harness';

/** In-process specifics the shared contract cannot observe through the MessageBus interface. */
describe('InProcessMessageBus', () => {
  let store: MemoryQueueStore;
  let bus: InProcessMessageBus;
  beforeEach(() => {
    store = new MemoryQueueStore();
    bus = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50, drainTimeoutMs: 200 });
  });
  afterEach(async () => {
    await bus.close();
  });

  it('never runs a handler inside the caller’s stack', async () => {
    const def = event<{ v: number }>('sync.thing.happened', 'AUDIT');
    const ask = rpc<object, string>('sync.thing.get');
    let inside = false;
    let ranInside = false;
    await bus.handle(ask, async () => {
      ranInside ||= inside;
      return 'ok';
    });
    await bus.subscribe(def, async () => {
      ranInside ||= inside;
    });
    inside = true;
    const pending = bus.request(ask, {});
    const published = bus.publish(def, { v: 1 });
    inside = false;
    await Promise.all([pending, published]);
    await sleep(50);
    expect(ranInside).toBe(false);
  });

  it('an idle worker does not claim on every poll: one question per tick finds nothing due, and a job inserted by another bus on the store is still taken', async () => {
    const def = queue<{ v: number }>('idle.job.run', 'PROCESSING');
    const seen: number[] = [];
    const claim = jest.spyOn(store, 'claim');
    const due = jest.spyOn(store, 'due');
    await bus.consume(def, async ({ v }) => void seen.push(v), { durable: 'w' });
    await bus.consume(queue<{ v: number }>('idle.other.run', 'PROCESSING'), async () => undefined, { durable: 'w' });
    await waitFor(() => claim.mock.calls.length === 2, 3_000, 'the first claim of each worker');
    const ticks = due.mock.calls.length;
    await waitFor(() => due.mock.calls.length >= ticks + 3, 3_000, 'three polls');
    expect(claim).toHaveBeenCalledTimes(2);
    // Another process sharing the tables: nothing wakes this bus's worker but the poll.
    const other = new InProcessMessageBus({ store, logger: silentLogger });
    await other.enqueue(def, { v: 7 });
    await waitFor(() => seen.includes(7), 3_000, 'the job inserted by the other bus');
    // Only the worker with a due row claimed (a second time after its job, its claim having been full).
    expect(new Set(claim.mock.calls.slice(2).map(([request]) => request.subject))).toEqual(new Set(['idle.job.run']));
    await other.close();
  });

  it('redelivers a job whose handler hangs past the ack wait, and keeps dead letters in the store', async () => {
    const def = queue<{ v: number }>('hang.job.run', 'PROCESSING');
    const deliveries: number[] = [];
    await bus.consume(
      def,
      async (_payload, meta) => {
        deliveries.push(meta.deliveryCount);
        await new Promise<never>(() => undefined);
      },
      { durable: 'w', ackWaitMs: 150, maxDeliver: 2, concurrency: 3 },
    );
    await bus.enqueue(def, { v: 1 });
    // Two hung deliveries, then the third claim finds the attempts used up and buries the job.
    await waitFor(() => deliveries.length === 2, 3_000, 'the redelivery');
    await waitFor(() => store.pendingCount() === 0, 3_000, 'the dead letter');
    const dead = await store.deadJobs('hang.job.run');
    expect(dead).toEqual([
      expect.objectContaining({ deliveryCount: 3, body: '{"v":1}', error: expect.objectContaining({ code: 'BUS_TIMEOUT' }) }),
    ]);
    expect(deliveries).toEqual([1, 2]);
  });

  it('is built by createMessageBus and shared through MessagingModule, which closes it on shutdown', async () => {
    const shared = await createMessageBus({ transport: 'inprocess', store, logger: silentLogger });
    const moduleRef = await Test.createTestingModule({ imports: [MessagingModule.forRoot(() => shared)] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const injected = app.get<MessageBus>(MESSAGE_BUS);
    expect(injected).toBe(shared);
    expect(await injected.isHealthy()).toBe(true);
    await app.close();
    expect(await shared.isHealthy()).toBe(false);
  });
});

/** Graceful shutdown: `stopConsuming` stops pulling, lets running jobs finish, and hands back the ones that do not. */
describe('InProcessMessageBus.stopConsuming', () => {
  const def = queue<{ v: number }>('drain.job.run', 'PROCESSING');

  it('lets a running job finish and acknowledges it; a job enqueued meanwhile waits for the next process', async () => {
    const store = new MemoryQueueStore();
    const first = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50, drainTimeoutMs: 5_000 });
    let release!: () => void;
    const started: number[] = [];
    await first.consume(
      def,
      async (p) => {
        started.push(p.v);
        await new Promise<void>((resolve) => (release = resolve));
      },
      { durable: 'w', ackWaitMs: 600_000, concurrency: 1 },
    );
    await first.enqueue(def, { v: 1 });
    await waitFor(() => started.length === 1, 3_000, 'the job to start');
    const stopping = first.stopConsuming();
    await first.enqueue(def, { v: 2 }); // still accepted: sending goes on while consuming stops
    release();
    await stopping;
    expect(started).toEqual([1]);
    await first.close();

    const next = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50 });
    const seen: { v: number; count: number }[] = [];
    await next.consume(def, async (p, meta) => void seen.push({ v: p.v, count: meta.deliveryCount }), { durable: 'w', ackWaitMs: 600_000 });
    await waitFor(() => seen.length === 1, 3_000, 'the waiting job');
    await sleep(200);
    expect(seen).toEqual([{ v: 2, count: 1 }]); // job 1 was acknowledged, not redelivered
    await next.close();
  });

  it('hands back a job still running when the drain time runs out: the next consumer takes it at once, not after the ack wait', async () => {
    const store = new MemoryQueueStore();
    const first = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50, drainTimeoutMs: 200 });
    const started: number[] = [];
    await first.consume(
      def,
      async (p) => {
        started.push(p.v);
        await new Promise<never>(() => undefined);
      },
      { durable: 'w', ackWaitMs: 600_000, concurrency: 1 },
    );
    await first.enqueue(def, { v: 7 });
    await waitFor(() => started.length === 1, 3_000, 'the job to start');
    await first.stopConsuming();
    await first.close();

    const next = new InProcessMessageBus({ store, logger: silentLogger, pollIntervalMs: 50 });
    const seen: { v: number; count: number }[] = [];
    await next.consume(def, async (p, meta) => void seen.push({ v: p.v, count: meta.deliveryCount }), { durable: 'w', ackWaitMs: 600_000 });
    await waitFor(() => seen.length === 1, 3_000, 'the handed-back job');
    expect(seen).toEqual([{ v: 7, count: 2 }]);
    await next.close();
  });
});
