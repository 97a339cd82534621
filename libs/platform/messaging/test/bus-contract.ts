import { DomainError, ErrorCodes, event, live, queue, rpc, stream, type BusContext } from '@kb/contracts';
import { IsInt, IsString, Min } from 'class-validator';
import type { DeliveryMeta } from '../src/message-bus';
import { deadLetterDef, type DeadLetter } from '../src/shared/dead-letter';
import { sleep, waitFor, type BusHarness, type TestBus } from './bus-harness';

class CreateThing {
  @IsString() name!: string;
  @IsInt() @Min(1) count!: number;
}

/**
 * The behaviour both transports promise. Each case uses its own subjects, so cases never see
 * each other's messages even though they share one store or server.
 */
export function describeBusContract(name: string, makeHarness: () => Promise<BusHarness>): void {
  describe(`MessageBus contract: ${name}`, () => {
    let harness: BusHarness;
    let bus: TestBus;
    let n = 0;
    const subject = (kind: string) => `svc${++n}.thing.${kind}`;

    beforeAll(async () => {
      harness = await makeHarness();
    });
    afterAll(async () => {
      await harness.dispose();
    });
    beforeEach(async () => {
      bus = await harness.createBus();
    });
    afterEach(async () => {
      await bus.close();
    });

    describe('request/reply', () => {
      it('round-trips payloads as JSON and carries the context', async () => {
        const def = rpc<{ at: Date }, { at: unknown; context: BusContext }>(subject('get'));
        await bus.handle(def, async (payload, context) => ({ at: payload.at, context }));
        const reply = await bus.request(
          def,
          { at: new Date('2024-05-06T07:08:09.000Z') },
          { context: { requestId: 'req-1', principalId: 'user-1' } },
        );
        expect(reply).toEqual({ at: '2024-05-06T07:08:09.000Z', context: { requestId: 'req-1', principalId: 'user-1' } });
      });

      it("passes a handler's DomainError to the caller unchanged", async () => {
        const def = rpc<object, never>(subject('get'));
        await bus.handle(def, async () => {
          throw new DomainError('KB_NOT_FOUND', 'Knowledge Box not found', { kbid: 'kb1' });
        });
        await expect(bus.request(def, {})).rejects.toMatchObject({
          name: 'DomainError',
          code: 'KB_NOT_FOUND',
          message: 'Knowledge Box not found',
          details: { kbid: 'kb1' },
        });
      });

      it('hides unexpected errors behind INTERNAL with an error id that is logged', async () => {
        const def = rpc<object, never>(subject('get'));
        await bus.handle(def, async () => {
          throw new Error('database exploded');
        });
        const err = await bus.request(def, {}).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DomainError);
        const domain = err as DomainError;
        expect(domain.code).toBe(ErrorCodes.INTERNAL);
        expect(domain.message).toBe('Internal error');
        const errorId = domain.details?.error_id;
        expect(typeof errorId).toBe('string');
        expect(
          harness.logs.some(
            (line) =>
              line.level === 'error' && line.fields.error_id === errorId && JSON.stringify(line.fields).includes('database exploded'),
          ),
        ).toBe(true);
      });

      it('fails with BUS_TIMEOUT when the handler is too slow', async () => {
        const def = rpc<object, string>(subject('get'));
        await bus.handle(def, async () => {
          await sleep(600);
          return 'late';
        });
        await expect(bus.request(def, {}, { timeoutMs: 150 })).rejects.toMatchObject({ code: ErrorCodes.BUS_TIMEOUT });
      });

      it("aborts the handler's signal when the caller cancels, and fails the caller at once", async () => {
        const def = rpc<object, string>(subject('get'));
        let started = false;
        let aborted = false;
        await bus.handle(def, (_payload, _context, signal) => {
          started = true;
          return new Promise((resolve) => signal.addEventListener('abort', () => resolve(String((aborted = signal.aborted)))));
        });
        const caller = new AbortController();
        const call = bus.request(def, {}, { timeoutMs: 20_000, signal: caller.signal }).catch((e: unknown) => e);
        await waitFor(() => started, 3_000, 'the handler to start');
        caller.abort();
        expect(await call).toMatchObject({ code: ErrorCodes.BUS_TIMEOUT, details: { cancelled: true } });
        await waitFor(() => aborted, 3_000, "the handler's signal to abort");
      });

      it("aborts the handler's signal at the deadline the request carries", async () => {
        const def = rpc<object, string>(subject('get'));
        let aborted = false;
        await bus.handle(
          def,
          (_payload, _context, signal) =>
            new Promise((resolve) => signal.addEventListener('abort', () => resolve(String((aborted = signal.aborted))))),
        );
        await expect(bus.request(def, {}, { timeoutMs: 300 })).rejects.toMatchObject({ code: ErrorCodes.BUS_TIMEOUT });
        await waitFor(() => aborted, 3_000, "the handler's signal to abort at the deadline");
      });

      it('gives each of many concurrent calls its own reply', async () => {
        const def = rpc<{ i: number }, number>(subject('get'));
        await bus.handle(def, async ({ i }) => {
          await sleep((i * 7) % 23);
          return i * 10;
        });
        const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => bus.request(def, { i })));
        expect(replies).toEqual(Array.from({ length: 60 }, (_, i) => i * 10));
      });

      it('cancels only the call the caller cancelled', async () => {
        const def = rpc<{ id: string }, string>(subject('get'));
        const aborted: string[] = [];
        await bus.handle(
          def,
          ({ id }, _context, signal) =>
            new Promise((resolve) => {
              signal.addEventListener('abort', () => aborted.push(id));
              setTimeout(() => resolve(id), 400);
            }),
        );
        const first = new AbortController();
        const cancelled = bus.request(def, { id: 'first' }, { signal: first.signal }).catch((e: unknown) => e);
        const kept = bus.request(def, { id: 'second' });
        await sleep(100);
        first.abort();
        expect(await cancelled).toMatchObject({ code: ErrorCodes.BUS_TIMEOUT, details: { cancelled: true } });
        expect(await kept).toBe('second');
        await waitFor(() => aborted.includes('first'), 3_000, 'the cancelled handler to see its abort');
        expect(aborted).toEqual(['first']);
      });

      it('times out the caller of a handler that takes no signal', async () => {
        const def = rpc<object, string>(subject('get'));
        await bus.handle(def, async () => {
          await sleep(400);
          return 'late';
        });
        await expect(bus.request(def, {}, { timeoutMs: 100 })).rejects.toMatchObject({ code: ErrorCodes.BUS_TIMEOUT });
      });

      it('fails with SERVICE_UNAVAILABLE when nobody answers', async () => {
        const def = rpc<object, string>(subject('get'));
        await expect(bus.request(def, {}, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: ErrorCodes.SERVICE_UNAVAILABLE });
      });

      it('validates the request against its class and lists every invalid member', async () => {
        const def = rpc<Partial<CreateThing> | Record<string, unknown>, boolean>(subject('create'), CreateThing);
        await bus.handle(def, async (payload) => payload instanceof CreateThing);
        expect(await bus.request(def, { name: 'ok', count: 2 })).toBe(true);
        const err = (await bus.request(def, { name: 7, count: 0 }).catch((e: unknown) => e)) as DomainError;
        expect(err.code).toBe(ErrorCodes.VALIDATION_FAILED);
        const detail = err.details?.detail as { loc: (string | number)[]; type: string }[];
        expect(detail.map((issue) => issue.loc.join('.')).sort()).toEqual(['count', 'name']);
      });

      it('shares the load between handlers of one queue group', async () => {
        const def = rpc<{ i: number }, string>(subject('get'));
        const seen = { a: 0, b: 0 };
        await bus.handle(def, async () => `a${++seen.a}`);
        await bus.handle(def, async () => `b${++seen.b}`);
        await Promise.all(Array.from({ length: 20 }, (_, i) => bus.request(def, { i })));
        expect(seen.a + seen.b).toBe(20);
        expect(seen.a).toBeGreaterThan(0);
        expect(seen.b).toBeGreaterThan(0);
      });
    });

    describe('streamed replies', () => {
      it('delivers items in order, then ends', async () => {
        const def = stream<{ count: number }, { i: number; at: unknown }>(subject('ask'));
        await bus.handleStream(def, async function* (payload) {
          for (let i = 0; i < payload.count; i++) yield { i, at: new Date(0) };
        });
        const items: unknown[] = [];
        for await (const item of bus.requestStream(def, { count: 5 })) items.push(item);
        expect(items).toEqual([0, 1, 2, 3, 4].map((i) => ({ i, at: '1970-01-01T00:00:00.000Z' })));
      });

      it('throws the DomainError at the caller after the items sent before it', async () => {
        const def = stream<object, number>(subject('ask'));
        await bus.handleStream(def, async function* () {
          yield 1;
          yield 2;
          throw new DomainError('GENERATION_FAILED', 'model went away');
        });
        const items: number[] = [];
        const err = await (async () => {
          for await (const item of bus.requestStream(def, {})) items.push(item);
        })().catch((e: unknown) => e);
        expect(items).toEqual([1, 2]);
        expect(err).toMatchObject({ code: 'GENERATION_FAILED', message: 'model went away' });
      });

      it('times out when the next item takes too long', async () => {
        const def = stream<object, number>(subject('ask'));
        await bus.handleStream(def, async function* () {
          yield 1;
          await sleep(800);
          yield 2;
        });
        const items: number[] = [];
        const err = await (async () => {
          for await (const item of bus.requestStream(def, {}, { timeoutMs: 200 })) items.push(item);
        })().catch((e: unknown) => e);
        expect(items).toEqual([1]);
        expect(err).toMatchObject({ code: ErrorCodes.BUS_TIMEOUT });
      });

      it('lets the handler notice when the caller stops early', async () => {
        const def = stream<object, number>(subject('ask'));
        let stoppedAt = -1;
        await bus.handleStream(def, async function* () {
          let i = 0;
          try {
            for (; i < 1_000; i++) {
              yield i;
              await sleep(10);
            }
          } finally {
            stoppedAt = i;
          }
        });
        for await (const item of bus.requestStream(def, {})) if (item >= 2) break;
        await waitFor(() => stoppedAt >= 0, 3_000, 'the handler to stop');
        expect(stoppedAt).toBeLessThan(1_000);
      });

      it("aborts the stream handler's signal when the caller cancels", async () => {
        const def = stream<object, number>(subject('ask'));
        let aborted = false;
        await bus.handleStream(def, async function* (_payload, _context, signal) {
          yield 1;
          // A slow provider call: only the signal ends it.
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          aborted = signal.aborted;
          yield 2;
        });
        const caller = new AbortController();
        const items: number[] = [];
        const err = await (async () => {
          for await (const item of bus.requestStream(def, {}, { timeoutMs: 20_000, signal: caller.signal })) {
            items.push(item);
            caller.abort();
          }
        })().catch((e: unknown) => e);
        expect(items).toEqual([1]);
        expect(err).toMatchObject({ code: ErrorCodes.BUS_TIMEOUT, details: { cancelled: true } });
        await waitFor(() => aborted, 3_000, "the handler's signal to abort");
      });

      it('fails with SERVICE_UNAVAILABLE when nobody streams that subject', async () => {
        const def = stream<object, number>(subject('ask'));
        const err = await (async () => {
          for await (const _ of bus.requestStream(def, {}, { timeoutMs: 1_000 })) void _;
        })().catch((e: unknown) => e);
        expect(err).toMatchObject({ code: ErrorCodes.SERVICE_UNAVAILABLE });
      });
    });

    describe('live messages', () => {
      it('reach the listeners of their key only, from subscription until close; bad payloads and keys are refused', async () => {
        const def = live<CreateThing>(subject('live'), CreateThing);
        const a: unknown[] = [];
        const b: unknown[] = [];
        const subA = await bus.subscribeLive(def, 'kb-a', (m) => a.push(m));
        const subB = await bus.subscribeLive(def, 'kb-b', (m) => b.push(m));
        await bus.publishLive(def, 'kb-a', { name: 'one', count: 1 });
        await bus.publishLive(def, 'kb-b', { name: 'two', count: 2 });
        await bus.publishLive(def, 'kb-a', { name: 'bad', count: 0 });
        await bus.publishLive(def, 'kb-a', { name: 'three', count: 3 });
        await waitFor(() => a.length >= 2 && b.length >= 1);
        expect(a).toEqual([
          { name: 'one', count: 1 },
          { name: 'three', count: 3 },
        ]);
        expect(b).toEqual([{ name: 'two', count: 2 }]);
        await subA.close();
        await bus.publishLive(def, 'kb-a', { name: 'after', count: 4 });
        await bus.publishLive(def, 'kb-b', { name: 'four', count: 4 });
        await waitFor(() => b.length >= 2);
        expect(a).toHaveLength(2);
        await subB.close();
        await expect(bus.publishLive(def, 'kb.a', { name: 'x', count: 1 })).rejects.toThrow(/live key/);
        await expect(bus.subscribeLive(def, '*', () => undefined)).rejects.toThrow(/live key/);
      });
    });

    describe('events', () => {
      it('gives every durable name every event, and splits events among instances of one name', async () => {
        const def = event<{ i: number }>(subject('created'), 'AUDIT');
        const got: Record<string, number[]> = { a: [], b: [], c1: [], c2: [], live: [] };
        const record = (key: string) => async (payload: { i: number }) => {
          got[key]?.push(payload.i);
          await sleep(20);
        };
        await bus.subscribe(def, record('a'), { durable: 'audit-a' });
        await bus.subscribe(def, record('b'), { durable: 'audit-b' });
        await bus.subscribe(def, record('c1'), { durable: 'audit-c' });
        await bus.subscribe(def, record('c2'), { durable: 'audit-c' });
        await bus.subscribe(def, record('live'));
        for (let i = 0; i < 10; i++) await bus.publish(def, { i });
        const all = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        await waitFor(
          () =>
            got.a?.length === 10 && got.b?.length === 10 && got.live?.length === 10 && (got.c1?.length ?? 0) + (got.c2?.length ?? 0) >= 10,
          8_000,
          'fan-out',
        );
        expect([...(got.a ?? [])].sort((x, y) => x - y)).toEqual(all);
        expect([...(got.b ?? [])].sort((x, y) => x - y)).toEqual(all);
        expect([...(got.live ?? [])].sort((x, y) => x - y)).toEqual(all);
        expect([...(got.c1 ?? []), ...(got.c2 ?? [])].sort((x, y) => x - y)).toEqual(all);
        expect(got.c1?.length).toBeGreaterThan(0);
        expect(got.c2?.length).toBeGreaterThan(0);
      });

      it('keeps events for a durable name while its process is down, but not from before it first subscribed', async () => {
        const def = event<{ i: number }>(subject('changed'), 'NOTIFICATIONS');
        await bus.publish(def, { i: 0 });
        await bus.subscribe(def, async () => undefined, { durable: 'late' });
        await bus.close();

        const publisher = await harness.createBus();
        for (let i = 1; i <= 3; i++) await publisher.publish(def, { i });
        await publisher.close();

        const returning = await harness.createBus();
        const got: number[] = [];
        await returning.subscribe(def, async ({ i }) => void got.push(i), { durable: 'late' });
        await waitFor(() => got.length >= 3, 5_000, 'the events kept while down');
        await sleep(200);
        expect(got.sort()).toEqual([1, 2, 3]);
      });

      it('delivers the context and a stable message id', async () => {
        const def = event<{ x: number }>(subject('updated'), 'AUDIT');
        const metas: DeliveryMeta[] = [];
        await bus.subscribe(def, async (_payload, meta) => void metas.push(meta), { durable: 'meta' });
        await bus.publish(def, { x: 1 }, { context: { requestId: 'r-9' }, msgId: 'evt-1' });
        await waitFor(() => metas.length === 1);
        expect(metas[0]).toMatchObject({ id: 'evt-1', subject: def.subject, deliveryCount: 1, context: { requestId: 'r-9' } });
      });
    });

    describe('work queues', () => {
      const fast = { ackWaitMs: 1_500, backoffMs: [100, 200, 300] };

      it('stopConsuming (shutdown) hands back a job still running at the drain limit: another process takes it at once', async () => {
        const def = queue<{ job: string }>(subject('process'), 'PROCESSING');
        const seen: { bus: string; count: number }[] = [];
        // The ack wait is far longer than the test: only a hand-back brings the job back in time.
        await bus.consume(
          def,
          async (_payload, meta) => {
            seen.push({ bus: 'first', count: meta.deliveryCount });
            await new Promise<never>(() => undefined);
          },
          { durable: 'workers', ackWaitMs: 600_000 },
        );
        await bus.enqueue(def, { job: 'j1' });
        await waitFor(() => seen.length === 1, 5_000, 'the first delivery');
        await bus.stopConsuming();
        const next = await harness.createBus();
        try {
          await next.consume(def, async (_payload, meta) => void seen.push({ bus: 'next', count: meta.deliveryCount }), {
            durable: 'workers',
            ackWaitMs: 600_000,
          });
          await waitFor(() => seen.length === 2, 10_000, 'the handed-back job');
          expect(seen).toEqual([
            { bus: 'first', count: 1 },
            { bus: 'next', count: 2 },
          ]);
        } finally {
          await next.close();
        }
      });

      it('retries a failing handler with backoff until it succeeds', async () => {
        const def = queue<{ job: string }>(subject('process'), 'PROCESSING');
        const attempts: { count: number; at: number }[] = [];
        await bus.consume(
          def,
          async (_payload, meta) => {
            attempts.push({ count: meta.deliveryCount, at: Date.now() });
            if (meta.deliveryCount < 3) throw new Error('flaky');
          },
          { durable: 'workers', maxDeliver: 5, ...fast },
        );
        await bus.enqueue(def, { job: 'j1' });
        await waitFor(() => attempts.length >= 3, 5_000, 'three attempts');
        await sleep(400);
        expect(attempts.map((a) => a.count)).toEqual([1, 2, 3]);
        const [first, second, third] = attempts.map((a) => a.at);
        expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(90);
        expect((third ?? 0) - (second ?? 0)).toBeGreaterThanOrEqual(190);
      });

      it('dead-letters after maxDeliver, and at once for an invalid payload', async () => {
        const def = queue<CreateThing | Record<string, unknown>>(subject('process'), 'PROCESSING', CreateThing);
        const letters: DeadLetter[] = [];
        await bus.subscribe(deadLetterDef(def), async (letter) => void letters.push(letter), { durable: 'dlq-watch' });
        const calls: number[] = [];
        await bus.consume(
          def,
          async (_payload, meta) => {
            calls.push(meta.deliveryCount);
            throw new DomainError('UPSTREAM_DOWN', 'try later');
          },
          { durable: 'workers', maxDeliver: 2, ...fast },
        );
        await bus.enqueue(def, { name: 'doomed', count: 1 });
        await bus.enqueue(def, { name: 'invalid', count: 0 });
        await waitFor(() => letters.length === 2, 6_000, 'two dead letters');
        const failed = letters.find((l) => (l.payload as { name: string }).name === 'doomed');
        const invalid = letters.find((l) => (l.payload as { name: string }).name === 'invalid');
        expect(failed).toMatchObject({
          subject: def.subject,
          deliveryCount: 2,
          error: { code: 'UPSTREAM_DOWN' },
          payload: { name: 'doomed', count: 1 },
        });
        expect(invalid).toMatchObject({ deliveryCount: 1, error: { code: ErrorCodes.VALIDATION_FAILED } });
        expect(calls).toEqual([1, 2]);
      });

      it('drops a second enqueue with the same msgId', async () => {
        const def = queue<{ v: number }>(subject('process'), 'PROCESSING');
        const got: number[] = [];
        await bus.consume(def, async (payload) => void got.push(payload.v), { durable: 'workers', ...fast });
        await bus.enqueue(def, { v: 1 }, { msgId: 'same' });
        await bus.enqueue(def, { v: 2 }, { msgId: 'same' });
        await bus.enqueue(def, { v: 3 }, { msgId: 'other' });
        await waitFor(() => got.length >= 2);
        await sleep(300);
        expect(got.sort()).toEqual([1, 3]);
      });

      it('redelivers to another instance after a consumer crashed without acking', async () => {
        const def = queue<{ job: string }>(subject('process'), 'PROCESSING');
        const crashed: DeliveryMeta[] = [];
        await bus.consume(
          def,
          async (_payload, meta) => {
            crashed.push(meta);
            await new Promise<never>(() => undefined);
          },
          { durable: 'workers', ackWaitMs: 1_000 },
        );
        await bus.enqueue(def, { job: 'survive' });
        await waitFor(() => crashed.length === 1, 5_000, 'the first delivery');
        await bus.abort();

        const other = await harness.createBus();
        const got: { payload: { job: string }; meta: DeliveryMeta }[] = [];
        await other.consume(def, async (payload, meta) => void got.push({ payload, meta }), { durable: 'workers', ackWaitMs: 1_000 });
        await waitFor(() => got.length === 1, 6_000, 'the redelivery');
        expect(got[0]?.payload).toEqual({ job: 'survive' });
        expect(got[0]?.meta.deliveryCount).toBe(2);
        expect(got[0]?.meta.id).toBe(crashed[0]?.id);
      });

      it('keeps a job that runs longer than the ack wait with its live worker: delivered once', async () => {
        const def = queue<{ job: string }>(subject('process'), 'PROCESSING');
        const deliveries: DeliveryMeta[] = [];
        let done = 0;
        const slow = async (_payload: { job: string }, meta: DeliveryMeta) => {
          deliveries.push(meta);
          await sleep(2_500);
          done++;
        };
        // Two consumers of one durable name: a lost lease would hand the job to the other one.
        await bus.consume(def, slow, { durable: 'workers', ackWaitMs: 600, maxWorkingMs: 10_000 });
        const other = await harness.createBus();
        await other.consume(def, slow, { durable: 'workers', ackWaitMs: 600, maxWorkingMs: 10_000 });
        await bus.enqueue(def, { job: 'long' });
        await waitFor(() => done === 1, 8_000, 'the long job');
        await sleep(1_000);
        expect(deliveries.map((d) => d.deliveryCount)).toEqual([1]);
      });

      it('hands a job on once its worker has renewed it for maxWorkingMs', async () => {
        const def = queue<{ job: string }>(subject('process'), 'PROCESSING');
        const deliveries: { count: number; at: number }[] = [];
        await bus.consume(
          def,
          async (_payload, meta) => {
            deliveries.push({ count: meta.deliveryCount, at: Date.now() });
            if (meta.deliveryCount === 1) await new Promise<never>(() => undefined);
          },
          { durable: 'workers', ackWaitMs: 500, maxWorkingMs: 1_500, concurrency: 2 },
        );
        await bus.enqueue(def, { job: 'stuck' });
        await waitFor(() => deliveries.length === 2, 8_000, 'the redelivery of a stuck job');
        expect(deliveries.map((d) => d.count)).toEqual([1, 2]);
        // Renewed up to maxWorkingMs, not redelivered at the first ack wait.
        expect((deliveries[1]?.at ?? 0) - (deliveries[0]?.at ?? 0)).toBeGreaterThanOrEqual(1_200);
      });

      it('loses nothing across a restart', async () => {
        const def = queue<{ n: number }>(subject('process'), 'PROCESSING');
        for (let i = 0; i < 10; i++) await bus.enqueue(def, { n: i }, { msgId: `job-${i}` });
        await bus.close();

        const restarted = await harness.createBus();
        const got: string[] = [];
        await restarted.consume(def, async (payload, meta) => void got.push(`${meta.id}:${payload.n}`), {
          durable: 'workers',
          ...fast,
          concurrency: 3,
        });
        await waitFor(() => got.length >= 10, 6_000, 'ten jobs');
        await sleep(300);
        expect(got.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `job-${i}:${i}`).sort());
      });
    });
  });
}
