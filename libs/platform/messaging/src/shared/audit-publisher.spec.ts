import { AUDIT_BATCH_MAX, ContentSubjects, type AuditRecordedEvent } from '@kb/contracts';
import type { MessageBus } from '../message-bus';
import { AuditPublisher } from './audit-publisher';

const event = (i: number): AuditRecordedEvent => ({ event_id: `e${i}`, kbid: 'kb', type: 'search', date: '2026-11-28T00:00:00Z' });

function fakeBus(fail = false) {
  const sent: { subject: string; events: AuditRecordedEvent[]; msgId?: string }[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const bus = {
    publish: async (subject: { subject: string }, payload: { events: AuditRecordedEvent[] }, o?: { msgId?: string }) => {
      await gate;
      if (fail) throw new Error('bus down');
      sent.push({ subject: subject.subject, events: payload.events, msgId: o?.msgId });
    },
  } as unknown as MessageBus;
  return { bus, sent, release };
}

describe('AuditPublisher', () => {
  it('publishes a full batch at once and the rest after the flush delay, each batch named by its first event and size', async () => {
    // The delay on jest's clock: a real 20 ms timer could fire after any wait on a loaded machine.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { bus, sent, release } = fakeBus();
      release();
      const settle = () => new Promise((r) => setImmediate(r));
      const publisher = new AuditPublisher(bus, ContentSubjects.auditBatch, () => undefined, 20);
      for (let i = 0; i < AUDIT_BATCH_MAX + 3; i++) publisher.record(event(i));
      await settle();
      expect(sent.map((b) => b.events.length)).toEqual([AUDIT_BATCH_MAX]);
      jest.advanceTimersByTime(19);
      await settle();
      expect(sent.map((b) => b.events.length)).toEqual([AUDIT_BATCH_MAX]);
      jest.advanceTimersByTime(1);
      await settle();
      expect(sent.map((b) => [b.subject, b.events.length, b.msgId])).toEqual([
        [ContentSubjects.auditBatch.subject, AUDIT_BATCH_MAX, `batch:e0:${AUDIT_BATCH_MAX}`],
        [ContentSubjects.auditBatch.subject, 3, `batch:e${AUDIT_BATCH_MAX}:3`],
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('close() publishes what waits and awaits the publishes under way', async () => {
    const { bus, sent, release } = fakeBus();
    const publisher = new AuditPublisher(bus, ContentSubjects.auditBatch, () => undefined, 60_000);
    publisher.record(event(1));
    publisher.record(event(2));
    let closed = false;
    const closing = publisher.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(sent.map((b) => b.events.map((e) => e.event_id))).toEqual([['e1', 'e2']]);
  });

  it('reports events the bus refused and never throws to the caller', async () => {
    const { bus, release } = fakeBus(true);
    release();
    const lost: string[] = [];
    const publisher = new AuditPublisher(
      bus,
      ContentSubjects.auditBatch,
      (events, err) => lost.push(`${events.length}:${(err as Error).message}`),
      60_000,
    );
    publisher.record(event(1));
    await expect(publisher.flush()).resolves.toBeUndefined();
    await expect(publisher.flush()).resolves.toBeUndefined();
    expect(lost).toEqual(['1:bus down']);
  });
});
