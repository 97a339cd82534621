import { DomainError, ErrorCodes } from '@kb/contracts';

/** What a handler's signal is tied to: the caller's deadline and the caller's cancel. */
export interface CallSignal {
  /** The handler's signal, created on first read (an AbortSignal costs microseconds; most handlers never read one). */
  readonly signal: AbortSignal;
  /** Whether the deadline passed or the caller cancelled, without creating the signal. */
  readonly aborted: boolean;
  /** Aborts now (the caller went away). */
  cancel(): void;
  /** Aborts now as the deadline passing would (for a caller that keeps the deadline's timer itself). */
  expire(): void;
  /** Releases the timer; the signal keeps its state. */
  dispose(): void;
}

/**
 * The signal a handler receives: aborted once the caller's deadline (`timeoutMs` after receipt,
 * relative so clocks of different hosts need not agree) has passed or when the caller cancels.
 * Nobody waits for a reply after either, so the handler should stop its work.
 */
export function callSignal(timeoutMs: number | undefined, cancelled?: AbortSignal): CallSignal {
  let controller: AbortController | undefined;
  let reason: Error | undefined;
  const abort = (why: Error) => {
    if (reason) return;
    reason = why;
    controller?.abort(why);
  };
  const timer =
    timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0
      ? setTimeout(() => abort(deadlineReason()), timeoutMs)
      : undefined;
  timer?.unref();
  const cancel = () => abort(cancelledReason());
  if (cancelled?.aborted) cancel();
  cancelled?.addEventListener('abort', cancel, { once: true });
  return {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason) controller.abort(reason);
      }
      return controller.signal;
    },
    get aborted() {
      return reason !== undefined;
    },
    cancel,
    expire: () => abort(deadlineReason()),
    dispose: () => {
      clearTimeout(timer);
      cancelled?.removeEventListener('abort', cancel);
    },
  };
}

const neverAborted = new AbortController().signal;

/**
 * The signal to hand a handler: the call's own when the handler declares a third parameter, else a
 * shared one that never aborts (the handler does not read it, and creating one per call is not free).
 */
export function signalFor(handler: (...args: never[]) => unknown, call: CallSignal): AbortSignal {
  return handler.length >= 3 ? call.signal : neverAborted;
}

/** The caller's error when its own signal aborted the call. */
export function cancelledError(subject: string): DomainError {
  return new DomainError(ErrorCodes.BUS_TIMEOUT, `Request on ${subject} cancelled by the caller`, { subject, cancelled: true });
}

export function deadlineReason(): Error {
  const err = new Error("The caller's deadline has passed");
  err.name = 'AbortError';
  return err;
}

export function cancelledReason(): Error {
  const err = new Error('The caller cancelled the request');
  err.name = 'AbortError';
  return err;
}
