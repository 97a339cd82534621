import { MemoryQueueStore } from './memory-queue-store';
import { QUEUE_CONSUMER, type NewMessage } from './queue-store';

const message = (subject: string, i: number): NewMessage => ({ msgId: `m${i}`, subject, body: '{}', context: {} });
const keys = async (store: MemoryQueueStore) => (await store.due()).map((k) => `${k.subject}|${k.consumer}`).sort();

describe('MemoryQueueStore.due', () => {
  it('names each (subject, consumer) with a due row once: not while leased or delayed, again when the lease runs out', async () => {
    const store = new MemoryQueueStore();
    expect(await store.due()).toEqual([]);
    await store.registerConsumer('e', 'a');
    await store.insertJob(message('q', 1));
    await store.insertJob(message('q', 2));
    await store.insertFanout(message('e', 3));
    expect(await keys(store)).toEqual(['e|a', `q|${QUEUE_CONSUMER}`]);

    const jobs = await store.claim({ subject: 'q', consumer: QUEUE_CONSUMER, limit: 2, leaseMs: 60_000, token: 't' });
    expect(await keys(store)).toEqual(['e|a']);
    expect(await store.release(jobs[0]!.id, 't', 60_000, null)).toBe(true);
    expect(await store.ack(jobs[1]!.id, 't')).toBe(true);
    expect(await keys(store)).toEqual(['e|a']);

    const [leased] = await store.claim({ subject: 'e', consumer: 'a', limit: 1, leaseMs: 60_000, token: 'u' });
    expect(leased?.msgId).toBe('m3');
    expect(await keys(store)).toEqual([]);
    // A minute later the lease has run out and the delayed job is due.
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    expect(await keys(store)).toEqual(['e|a', `q|${QUEUE_CONSUMER}`]);
  });

  afterEach(() => jest.restoreAllMocks());
});
