import type { BusContext } from '@kb/contracts';
import { headers as natsHeaders, type MsgHdrs } from 'nats';

const REQUEST_ID = 'Kb-Request-Id';
const PRINCIPAL_ID = 'Kb-Principal-Id';
/** Marks the parts of a streamed reply. */
export const STREAM_PART = 'Kb-Stream-Part';
export type StreamPart = 'item' | 'end' | 'error';
/** The caller's time limit on a request, in milliseconds from receipt: the responder aborts its work after it. */
export const TIMEOUT_MS = 'Kb-Timeout-Ms';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

export function decodeText(data: Uint8Array): string {
  return decoder.decode(data);
}

/** Context rides in headers so handlers get it without touching the payload. */
export function contextHeaders(context: BusContext | undefined, extra: Record<string, string> = {}): MsgHdrs {
  const h = natsHeaders();
  if (context?.requestId) h.set(REQUEST_ID, context.requestId);
  if (context?.principalId) h.set(PRINCIPAL_ID, context.principalId);
  for (const [key, value] of Object.entries(extra)) h.set(key, value);
  return h;
}

export function contextFromHeaders(h: MsgHdrs | undefined): BusContext {
  const context: BusContext = {};
  const requestId = h?.get(REQUEST_ID);
  const principalId = h?.get(PRINCIPAL_ID);
  if (requestId) context.requestId = requestId;
  if (principalId) context.principalId = principalId;
  return context;
}

/** NATS names (streams, consumers) allow no dots, wildcards or spaces. */
export function natsName(raw: string): string {
  return raw.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Where an app's replies arrive: `_INBOX.<app>.<id>` (the server lets only that app read them). */
export function inboxPrefix(appName: string): string {
  return `_INBOX.${natsName(appName)}`;
}
