import { ExtendedProtocolTracker } from './pglite-session-guard';

const message = (type: string): Uint8Array => new Uint8Array([type.charCodeAt(0), 0, 0, 0, 4]);
const startup = new Uint8Array([0, 0, 0, 8, 0, 3, 0, 0]);

describe('ExtendedProtocolTracker', () => {
  it.each([
    ['a simple query', ['Q'], false],
    ['a startup message', [startup], false],
    ['Parse without Sync', ['P'], true],
    ['Parse, Bind, Describe, Execute', ['P', 'B', 'D', 'E'], true],
    ['a complete extended query', ['P', 'B', 'D', 'E', 'S'], false],
    ['Bind and Execute of a prepared statement', ['B', 'E'], true],
    ['Close then Sync', ['C', 'S'], false],
    ['Flush keeps it open', ['P', 'H'], true],
  ])('after %s the sequence open is %s', (_label, messages, open) => {
    const tracker = new ExtendedProtocolTracker();
    for (const m of messages) tracker.observe(typeof m === 'string' ? message(m) : m);
    expect(tracker.isOpen).toBe(open);
  });
});
