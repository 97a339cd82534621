import type { ClassConstructor } from 'class-transformer';

/**
 * Pairs a subject with its payload types. Producers and consumers import the same
 * definition, so a subject can never be called with the wrong payload.
 *
 * Kinds:
 * - rpc:    request/reply; a service answers, callers get a typed promise with a timeout.
 * - stream: request answered by a sequence of items ended by a final item (used by /ask).
 * - event:  fan-out; every durable subscriber group gets every event (JetStream stream).
 * - queue:  work queue; each job goes to exactly one consumer of a durable group, is
 *           acknowledged only after the handler resolved, redelivered with backoff on failure
 *           and dead-lettered after the last attempt.
 * - live:   fire-and-forget to whoever listens right now, on `<subject>.<key>` (the key is e.g. a
 *           KB id): nothing is stored, nothing redelivered; a process listens only to the keys it
 *           needs, so it receives nothing for the others.
 */
export type StreamName = 'PROCESSING' | 'PROCESSED' | 'AUDIT' | 'USAGE' | 'NOTIFICATIONS';

export interface RpcDef<Req, Res> {
  readonly kind: 'rpc';
  readonly subject: string;
  readonly request?: ClassConstructor<object>;
  /** Phantom members: only carry the types. */
  readonly __req?: Req;
  readonly __res?: Res;
}

export interface StreamDef<Req, Item> {
  readonly kind: 'stream';
  readonly subject: string;
  readonly request?: ClassConstructor<object>;
  readonly __req?: Req;
  readonly __item?: Item;
}

export interface EventDef<T> {
  readonly kind: 'event';
  readonly subject: string;
  readonly stream: StreamName;
  readonly payload?: ClassConstructor<object>;
  readonly __payload?: T;
}

export interface QueueDef<T> {
  readonly kind: 'queue';
  readonly subject: string;
  readonly stream: StreamName;
  readonly payload?: ClassConstructor<object>;
  readonly __payload?: T;
}

export interface LiveDef<T> {
  readonly kind: 'live';
  readonly subject: string;
  readonly payload?: ClassConstructor<object>;
  readonly __payload?: T;
}

export type AnyDef = RpcDef<unknown, unknown> | StreamDef<unknown, unknown> | EventDef<unknown> | QueueDef<unknown> | LiveDef<unknown>;

export function rpc<Req, Res>(subject: string, request?: ClassConstructor<object>): RpcDef<Req, Res> {
  return { kind: 'rpc', subject, request };
}

export function stream<Req, Item>(subject: string, request?: ClassConstructor<object>): StreamDef<Req, Item> {
  return { kind: 'stream', subject, request };
}

export function event<T>(subject: string, streamName: StreamName, payload?: ClassConstructor<object>): EventDef<T> {
  return { kind: 'event', subject, stream: streamName, payload };
}

export function queue<T>(subject: string, streamName: StreamName, payload?: ClassConstructor<object>): QueueDef<T> {
  return { kind: 'queue', subject, stream: streamName, payload };
}

export function live<T>(subject: string, payload?: ClassConstructor<object>): LiveDef<T> {
  return { kind: 'live', subject, payload };
}

/** A live key is one subject token: letters, digits, `-` and `_` only (a KB id). */
export const LIVE_KEY = /^[A-Za-z0-9_-]{1,128}$/;

/** Context that travels with every message (never a secret). */
export interface BusContext {
  requestId?: string;
  principalId?: string;
}
