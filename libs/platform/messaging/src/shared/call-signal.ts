import { DomainError, ErrorCodes } from '@kb/contracts';

/** What a handler's signal is tied to: the caller's deadline and the caller's cancel. */
export interface CallSignal {
  readonly signal: AbortSignal;
  /** Aborts now (the caller went away). */
  cancel(): void;
  /** Releases the timer; the signal keeps its state. */
  dispose(): void;
}

/**
 * The signal a handler receives: aborted once the caller's deadline (`timeoutMs` after receipt,
 * relative so clocks of different hosts need not agree) has passed or when the caller cancels.
 * Nobody waits for a reply after either, so the handler should stop its work.
 */
export function callSignal(timeoutMs: number | undefined, cancelled?: AbortSignal): CallSignal {
  const controller = new AbortController();
  const timer =
    timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0
      ? setTimeout(() => controller.abort(deadlineReason()), timeoutMs)
      : undefined;
  timer?.unref();
  const cancel = () => controller.abort(cancelledReason());
  if (cancelled?.aborted) cancel();
  cancelled?.addEventListener('abort', cancel, { once: true });
  return {
    signal: controller.signal,
    cancel,
    dispose: () => {
      clearTimeout(timer);
      cancelled?.removeEventListener('abort', cancel);
    },
  };
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
