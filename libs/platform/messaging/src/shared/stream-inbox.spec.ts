import { DomainError } from '@kb/contracts';
import { StreamInbox } from './stream-inbox';

const timeout = () => new DomainError('BUS_TIMEOUT', 'timeout');

describe('StreamInbox', () => {
  it('hands out buffered items in order, then done', async () => {
    const inbox = new StreamInbox<number>();
    inbox.push(1);
    inbox.push(2);
    inbox.end();
    expect(await inbox.next(100, timeout)).toEqual({ value: 1, done: false });
    expect(await inbox.next(100, timeout)).toEqual({ value: 2, done: false });
    expect((await inbox.next(100, timeout)).done).toBe(true);
  });

  it('wakes a waiting reader when an item arrives', async () => {
    const inbox = new StreamInbox<string>();
    const pending = inbox.next(1000, timeout);
    setTimeout(() => inbox.push('a'), 10);
    expect(await pending).toEqual({ value: 'a', done: false });
  });

  it('delivers buffered items before the error', async () => {
    const inbox = new StreamInbox<number>();
    inbox.push(1);
    inbox.fail(new DomainError('BOOM', 'boom'));
    expect(await inbox.next(100, timeout)).toEqual({ value: 1, done: false });
    await expect(inbox.next(100, timeout)).rejects.toMatchObject({ code: 'BOOM' });
  });

  it('times out when nothing arrives', async () => {
    const inbox = new StreamInbox<number>();
    await expect(inbox.next(20, timeout)).rejects.toMatchObject({ code: 'BUS_TIMEOUT' });
    expect(inbox.finished).toBe(true);
  });
});
