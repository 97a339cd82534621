import { DomainError, ErrorCodes } from '@kb/contracts';
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import { callSignal, cancelledError, type CallSignal } from '../shared/call-signal';
import { decodeEnvelope, timeoutError, unavailableError } from '../shared/envelope';
import { decodeText, encodeText, TIMEOUT_MS } from './nats-codec';

export interface OutgoingRequest {
  /** The subject as callers name it (for errors). */
  subject: string;
  /** The subject on the wire (with the bus prefix). */
  wireSubject: string;
  body: string;
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

/** What a reply inbox's messages are handed to. */
export type ReplyCallback = (err: Error | null, msg: Msg | undefined) => void;

/**
 * Every reply inbox of one connection behind one subscription (`<inboxPrefix>.*`): a call takes a
 * fresh inbox name and its route, instead of subscribing and unsubscribing on the server for each
 * call. Inbox names stay one per call, so a caller can still cancel its call by name.
 */
export class ReplyRoutes {
  private readonly routes = new Map<string, ReplyCallback>();
  private sub?: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    private readonly inboxPrefix: string,
  ) {}

  /** A new inbox whose messages go to `callback` until `close(inbox)`. */
  open(callback: ReplyCallback): string {
    this.sub ??= this.nc.subscribe(`${this.inboxPrefix}.*`, {
      callback: (err, msg) => {
        if (err) {
          // The subscription itself failed (permissions, connection closed): every waiting call learns it.
          for (const route of [...this.routes.values()]) route(err, undefined);
          this.routes.clear();
          this.sub = undefined;
          return;
        }
        this.routes.get(msg.subject)?.(null, msg);
      },
    });
    const inbox = createInbox(this.inboxPrefix);
    this.routes.set(inbox, callback);
    return inbox;
  }

  close(inbox: string): void {
    this.routes.delete(inbox);
  }

  /** Calls waiting for a reply (for tests). */
  get size(): number {
    return this.routes.size;
  }
}

/**
 * One request/reply on its own inbox name (routed by ReplyRoutes), so that the caller can
 * cancel it by name. The headers carry the time limit, after which the responder stops by itself.
 *
 * A request no process subscribes to (the server answers "no responders": the service is
 * restarting, or not started yet) reached nobody, so it is sent again, after 50 ms, 100 ms, …
 * up to 500 ms between tries, until its time limit: a rolling restart of a service with one
 * replica delays its callers instead of failing them. Past the limit it fails with
 * SERVICE_UNAVAILABLE ("No service answers …"), not BUS_TIMEOUT: no one ever had it.
 */
export function sendRequest<Res>(nc: NatsConnection, replies: ReplyRoutes, r: OutgoingRequest): Promise<Res> {
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
      replies.close(inbox);
      outcome();
    };
    const send = () => {
      waiting = false;
      if (settled) return;
      // The responder's own deadline is what is left of the caller's.
      r.headers.set(TIMEOUT_MS, String(Math.max(1, deadline - Date.now())));
      nc.publish(r.wireSubject, encodeText(r.body), { reply: inbox, headers: r.headers });
    };
    const inbox = replies.open((err, msg) => {
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
        if (err || !msg)
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
    });
    const timer = setTimeout(
      () => settle(() => reject(waiting ? unavailableError(r.subject) : timeoutError(r.subject, r.timeoutMs))),
      r.timeoutMs,
    );
    const onAbort = () =>
      settle(() => {
        sendCancel(nc, inbox);
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

/**
 * The responder side of cancels: one subscription on every caller's `<inbox>.cancel`
 * (`_INBOX.*.*.cancel`, which the server lets every serving app hear), taken at the first call
 * received, and each call's signal found by its reply subject.
 */
export class CancelRoutes {
  private readonly calls = new Map<string, CallSignal>();
  private sub?: Subscription;

  constructor(private readonly nc: NatsConnection) {}

  /** The call's signal, aborted at the caller's deadline (`Kb-Timeout-Ms`) or by its cancel. */
  receive(msg: Msg): CallSignal {
    const timeout = Number(msg.headers?.get(TIMEOUT_MS));
    const call = callSignal(Number.isFinite(timeout) && timeout > 0 ? timeout : undefined);
    const reply = msg.reply;
    if (!reply) return call;
    this.sub ??= this.nc.subscribe('_INBOX.*.*.cancel', {
      callback: (err, cancel) => {
        if (err) {
          this.sub = undefined;
          return;
        }
        this.calls.get(cancel.subject.slice(0, -'.cancel'.length))?.cancel();
      },
    });
    this.calls.set(reply, call);
    return {
      get signal() {
        return call.signal;
      },
      get aborted() {
        return call.aborted;
      },
      cancel: call.cancel,
      expire: call.expire,
      dispose: () => {
        call.dispose();
        this.calls.delete(reply);
      },
    };
  }

  /** Calls being answered (for tests). */
  get size(): number {
    return this.calls.size;
  }
}
