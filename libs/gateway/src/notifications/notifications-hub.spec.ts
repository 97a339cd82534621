import { EventEmitter } from 'node:events';
import { ContentSubjects, ErrorCodes, type KbNotificationEvent } from '@kb/contracts';
import { InProcessMessageBus, MemoryQueueStore, silentLogger } from '@kb/platform/messaging';
import type { LineSink } from './notification-reader';
import { DEFAULT_NOTIFICATION_LIMITS, NotificationsHub } from './notifications-hub';

/** A connection that takes `capacity` lines, then holds until `drain()`; it records what was written. */
class FakeSink extends EventEmitter implements LineSink {
  readonly lines: { type: string; data: Record<string, unknown> }[] = [];
  writableFinished = false;
  ended = false;
  destroyed = false;
  constructor(private capacity = Infinity) {
    super();
  }
  write(chunk: string): boolean {
    this.lines.push(JSON.parse(Buffer.from(chunk.trim(), 'base64').toString('utf8')) as never);
    return --this.capacity > 0;
  }
  end(chunk?: string): void {
    if (chunk) this.write(chunk);
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  drain(capacity: number): void {
    this.capacity = capacity;
    this.emit('drain');
  }
  types(): string[] {
    return this.lines.map((l) => l.type);
  }
}

const KB1 = '11111111-1111-4111-8111-111111111111';
const KB2 = '22222222-2222-4222-8222-222222222222';
const note = (kbid: string, rid: string): KbNotificationEvent => ({
  kbid,
  type: 'resource_written',
  data: { resource_uuid: rid, resource_title: rid, seqid: 1, operation: 'created', error: false },
});
const settle = () => new Promise((r) => setImmediate(r));

describe('NotificationsHub', () => {
  let bus: InProcessMessageBus;
  let hub: NotificationsHub;

  beforeEach(() => {
    bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
    hub = new NotificationsHub(bus, {
      ...DEFAULT_NOTIFICATION_LIMITS,
      perKb: 3,
      perCaller: 2,
      maxPending: 5,
      heartbeatMs: 60_000,
      dropGraceMs: 60_000,
    });
  });
  afterEach(async () => {
    hub.onModuleDestroy();
    await bus.close();
  });

  it("sends a reader its KB's notifications only, after a first heartbeat", async () => {
    const a = new FakeSink();
    const b = new FakeSink();
    await hub.open(KB1, 'alice', a, () => undefined);
    await hub.open(KB2, 'bob', b, () => undefined);
    await bus.publishLive(ContentSubjects.kbNotification, KB1, note(KB1, 'r1'));
    await bus.publishLive(ContentSubjects.kbNotification, KB2, note(KB2, 'r2'));
    await settle();
    expect(a.types()).toEqual(['heartbeat', 'resource_written']);
    expect(a.lines[1]).toEqual({ type: 'resource_written', data: note(KB1, 'r1').data });
    expect(b.lines.map((l) => l.data['resource_uuid'])).toEqual([undefined, 'r2']);
  });

  it('listens to a KB on the bus only while it has readers', async () => {
    const spy = jest.spyOn(bus, 'subscribeLive');
    const r1 = await hub.open(KB1, 'alice', new FakeSink(), () => undefined);
    const r2 = await hub.open(KB1, 'bob', new FakeSink(), () => undefined);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(hub.openStreams(KB1)).toBe(2);
    r1.abandon();
    r2.abandon();
    expect(hub.openStreams(KB1)).toBe(0);
    await hub.open(KB1, 'alice', new FakeSink(), () => undefined);
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('refuses streams past the limits per caller and per KB (429), and frees a slot when one ends', async () => {
    const first = await hub.open(KB1, 'alice', new FakeSink(), () => undefined);
    await hub.open(KB2, 'alice', new FakeSink(), () => undefined);
    await expect(hub.open(KB1, 'alice', new FakeSink(), () => undefined)).rejects.toMatchObject({ code: ErrorCodes.RATE_LIMITED });
    first.abandon();
    await hub.open(KB1, 'alice', new FakeSink(), () => undefined);
    await hub.open(KB1, 'bob', new FakeSink(), () => undefined);
    await hub.open(KB1, 'carol', new FakeSink(), () => undefined);
    await expect(hub.open(KB1, 'dave', new FakeSink(), () => undefined)).rejects.toMatchObject({ code: ErrorCodes.RATE_LIMITED });
  });

  it('holds at most maxPending lines for a reader that does not keep up, then drops it with a final message', async () => {
    const slow = new FakeSink(2);
    const fast = new FakeSink();
    await hub.open(KB1, 'alice', slow, () => undefined);
    await hub.open(KB1, 'bob', fast, () => undefined);
    for (let i = 0; i < 20; i++) await bus.publishLive(ContentSubjects.kbNotification, KB1, note(KB1, `r${i}`));
    await settle();
    // Heartbeat + 1 written before the connection filled, 5 held, the 6th pending one drops the reader.
    expect(slow.ended).toBe(true);
    expect(slow.lines.at(-1)).toEqual({ type: 'closed', data: { reason: 'slow_reader' } });
    expect(slow.lines).toHaveLength(3);
    expect(hub.openStreams(KB1)).toBe(1);
    // The other reader of the KB got everything.
    expect(fast.types().filter((t) => t === 'resource_written')).toHaveLength(20);
  });

  it('writes what was held once the connection drains, in order', async () => {
    const sink = new FakeSink(1);
    await hub.open(KB1, 'alice', sink, () => undefined);
    for (let i = 0; i < 3; i++) await bus.publishLive(ContentSubjects.kbNotification, KB1, note(KB1, `r${i}`));
    await settle();
    expect(sink.types()).toEqual(['heartbeat']);
    sink.drain(Infinity);
    expect(sink.lines.slice(1).map((l) => l.data['resource_uuid'])).toEqual(['r0', 'r1', 'r2']);
    expect(sink.ended).toBe(false);
  });

  it('ends every stream with a final message at shutdown', async () => {
    const sink = new FakeSink();
    await hub.open(KB1, 'alice', sink, () => undefined);
    hub.onModuleDestroy();
    expect(sink.lines.at(-1)).toEqual({ type: 'closed', data: { reason: 'shutdown' } });
    expect(hub.openStreams()).toBe(0);
  });
});
