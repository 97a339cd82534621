import { callSignal, signalFor } from './call-signal';

describe('callSignal', () => {
  it('aborts at the deadline with an AbortError, whether the signal was read before or after', async () => {
    const early = callSignal(20);
    const readEarly = early.signal;
    const late = callSignal(20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(readEarly.aborted).toBe(true);
    expect(early.aborted).toBe(true);
    expect(late.aborted).toBe(true);
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as Error).name).toBe('AbortError');
    expect((late.signal.reason as Error).message).toMatch(/deadline/);
  });

  it('follows the caller’s cancel, and keeps the first reason', () => {
    const caller = new AbortController();
    const call = callSignal(undefined, caller.signal);
    expect(call.aborted).toBe(false);
    caller.abort();
    expect(call.aborted).toBe(true);
    call.expire();
    expect((call.signal.reason as Error).message).toMatch(/cancelled/);
  });

  it('reports a cancel to listeners of a signal read before it', () => {
    const call = callSignal(undefined);
    const seen: string[] = [];
    call.signal.addEventListener('abort', () => seen.push('abort'));
    call.cancel();
    expect(seen).toEqual(['abort']);
  });

  it('stops listening to the caller once disposed', () => {
    const caller = new AbortController();
    const call = callSignal(1_000, caller.signal);
    call.dispose();
    caller.abort();
    expect(call.aborted).toBe(false);
  });
});

describe('signalFor', () => {
  it('gives the call’s own signal to a handler that declares one, and a never-aborting one to the others', () => {
    const call = callSignal(undefined);
    call.cancel();
    expect(signalFor((_p: never, _c: never, _s: never) => undefined, call)).toBe(call.signal);
    const shared = signalFor((_p: never) => undefined, call);
    expect(shared).not.toBe(call.signal);
    expect(shared.aborted).toBe(false);
  });
});
