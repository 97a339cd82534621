import { DomainError, ErrorCodes } from '@kb/contracts';
import type { Msg, MsgHdrs, NatsConnection } from 'nats';
import { callSignal, cancelledError, type CallSignal } from '../shared/call-signal';
import { decodeEnvelope, timeoutError, unavailableError } from '../shared/envelope';
import { decodeText, encodeText, TIMEOUT_MS } from './nats-codec';

export interface OutgoingRequest {
  /** The subject as callers name it (for errors). */
  subject: string;
  /** The subject on the wire (with the bus prefix). */
  wireSubject: string;
  body: string;
  /** The call's own reply inbox: its name is what a cancel is sent under. */
  inbox: string;
  timeoutMs: number;
  signal?: AbortSignal;
  headers: MsgHdrs;
}

/** Waits before sending a request again that no process took: short at first, then at most half a second. */
export function noResponderDelayMs(attempt: number): number {
  return Math.min(500, 50 * 2 ** attempt);
}

/** True for the server's "no responders" status: nobody subscribes to the subject, so nothing was delivered. */
export function isNoResponders(err: unknown, msg: Msg | undefined): boolean {
  return msg?.headers?.code === 503 || (err as { code?: string } | null)?.code === '503';
}

/**
 * One request/reply on its own inbox (not the connection's shared one), so that the caller can
 * cancel it by name. The headers carry the time limit, after which the responder stops by itself.
 *
 * A request no process subscribes to (the server answers "no responders": the service is
 * restarting, or not started yet) reached nobody, so it is sent again, after 50 ms, 100 ms, …
 * up to 500 ms between tries, until its time limit: a rolling restart of a service with one
 * replica delays its callers instead of failing them. Past the limit it fails with
 * SERVICE_UNAVAILABLE ("No service answers …"), not BUS_TIMEOUT: no one ever had it.
 */
export function sendRequest<Res>(nc: NatsConnection, r: OutgoingRequest): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const deadline = Date.now() + r.timeoutMs;
    let settled = false;
    let attempts = 0;
    let resend: NodeJS.Timeout | undefined;
    /** A try went to nobody and the next is not sent yet. */
    let waiting = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(resend);
      r.signal?.removeEventListener('abort', onAbort);
      sub.unsubscribe();
      outcome();
    };
    const send = () => {
      waiting = false;
      if (settled) return;
      // The responder's own deadline is what is left of the caller's.
      r.headers.set(TIMEOUT_MS, String(Math.max(1, deadline - Date.now())));
      nc.publish(r.wireSubject, encodeText(r.body), { reply: r.inbox, headers: r.headers });
    };
    const sub = nc.subscribe(r.inbox, {
      callback: (err, msg) => {
        if (settled) return;
        if (isNoResponders(err, msg)) {
          const wait = noResponderDelayMs(attempts++);
          if (Date.now() + wait < deadline) {
            waiting = true;
            resend = setTimeout(send, wait);
            return;
          }
          return settle(() => reject(unavailableError(r.subject)));
        }
        settle(() => {
          if (err)
            return reject(
              new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `Bus request on ${r.subject} failed`, {
                subject: r.subject,
                reason: String(err),
              }),
            );
          try {
            resolve(decodeEnvelope<Res>(decodeText(msg.data)));
          } catch (e) {
            reject(e);
          }
        });
      },
    });
    const timer = setTimeout(
      () => settle(() => reject(waiting ? unavailableError(r.subject) : timeoutError(r.subject, r.timeoutMs))),
      r.timeoutMs,
    );
    const onAbort = () =>
      settle(() => {
        sendCancel(nc, r.inbox);
        reject(cancelledError(r.subject));
      });
    r.signal?.addEventListener('abort', onAbort, { once: true });
    send();
  });
}

/** The caller side of a cancel: `<inbox>.cancel`, which only the responder of that call listens on. */
export function sendCancel(nc: NatsConnection, inbox: string): void {
  if (!nc.isClosed()) nc.publish(`${inbox}.cancel`);
}

/** The responder side: the call's signal, aborted at the caller's deadline (`Kb-Timeout-Ms`) or by its cancel. */
export function receiveCall(nc: NatsConnection, msg: Msg): CallSignal {
  const timeout = Number(msg.headers?.get(TIMEOUT_MS));
  const call = callSignal(Number.isFinite(timeout) && timeout > 0 ? timeout : undefined);
  if (!msg.reply) return call;
  const sub = nc.subscribe(`${msg.reply}.cancel`, { max: 1, callback: () => call.cancel() });
  return {
    signal: call.signal,
    cancel: call.cancel,
    dispose: () => {
      call.dispose();
      sub.unsubscribe();
    },
  };
}
