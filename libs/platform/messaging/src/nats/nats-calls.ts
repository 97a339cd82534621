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

/**
 * One request/reply on its own inbox (not the connection's shared one), so that the caller can
 * cancel it by name. The headers carry the time limit, after which the responder stops by itself.
 */
export function sendRequest<Res>(nc: NatsConnection, r: OutgoingRequest): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.signal?.removeEventListener('abort', onAbort);
      sub.unsubscribe();
      outcome();
    };
    const sub = nc.subscribe(r.inbox, {
      max: 1,
      callback: (err, msg) =>
        settle(() => {
          if (msg?.headers?.code === 503 || (err as { code?: string } | null)?.code === '503') return reject(unavailableError(r.subject));
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
        }),
    });
    const timer = setTimeout(() => settle(() => reject(timeoutError(r.subject, r.timeoutMs))), r.timeoutMs);
    const onAbort = () =>
      settle(() => {
        sendCancel(nc, r.inbox);
        reject(cancelledError(r.subject));
      });
    r.signal?.addEventListener('abort', onAbort, { once: true });
    nc.publish(r.wireSubject, encodeText(r.body), { reply: r.inbox, headers: r.headers });
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
