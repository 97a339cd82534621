import { DomainError, ErrorCodes, LIVE_KEY, type LiveDef } from '@kb/contracts';
import type { BusLogger } from './bus-logger';
import { describeError } from './bus-logger';
import { validateIncoming } from './envelope';

/** The subject one key of a live definition travels on. */
export function liveSubject(def: LiveDef<unknown>, key: string): string {
  if (!LIVE_KEY.test(key)) throw new DomainError(ErrorCodes.INTERNAL, `Not a valid live key: ${key.slice(0, 64)}`);
  return `${def.subject}.${key}`;
}

/**
 * Delivers one live message to a listener: decoded and validated, and a throwing listener or a
 * malformed message is logged, never propagated (the publisher must not learn of its listeners).
 */
export function deliverLive<T>(def: LiveDef<T>, text: string, handler: (payload: T) => void, logger: BusLogger): void {
  try {
    handler(validateIncoming<T>(def.payload, JSON.parse(text)));
  } catch (err) {
    logger.warn('Live message dropped', { subject: def.subject, err: describeError(err) });
  }
}
