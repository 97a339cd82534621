import type { ActorDto, BusContext, CredentialKind, UserType } from '@kb/contracts';
import type { ServerResponse } from 'node:http';
import type { AuthedRequest } from '../auth/auth.guard';

const header = (req: AuthedRequest, ...names: string[]): string | undefined => {
  for (const n of names) {
    const v = req.headers[n];
    if (typeof v === 'string' && v !== '') return v.slice(0, 256);
  }
  return undefined;
};

/** Who acts, for audit records: the caller-supplied user (x-svcdb-user) and client type. */
export function actorOf(req: AuthedRequest): ActorDto {
  return {
    user: header(req, 'x-svcdb-user', 'x-nucliadb-user') ?? req.principal?.user_id,
    client_type: header(req, 'x-ndb-client') ?? 'api',
    principal_id: req.principal?.id,
    user_type: userTypeOf(req.principal?.kind),
    // An understanding-API client's key (its client's internal id): usage is metered per key (Get Usage `nua_key_id`).
    ...(req.principal?.kind === 'ua_key' ? { nua_key_id: req.principal.id } : {}),
  };
}

/** The activity log's `user_type`: keys (API, temporal, UA) act as `nuakey`, people as `user`. */
export function userTypeOf(kind: CredentialKind | undefined): UserType {
  return kind === 'api_key' || kind === 'temporal_key' || kind === 'ua_key' ? 'nuakey' : 'user';
}

/** `x-skip-store: true` on a write with files: processing reads them, then they are deleted (spec 4.2). */
export function skipStoreOf(req: AuthedRequest): boolean {
  return (
    String(req.headers['x-skip-store'] ?? '')
      .trim()
      .toLowerCase() === 'true'
  );
}

/**
 * Bus options of a call made for this request: its context, and a signal that aborts when the
 * client goes away (connection closed before the response was finished, or the server's request
 * timeout closed it), so the service stops working for nobody.
 */
export function busContextOf(req: AuthedRequest): { context: BusContext; signal: AbortSignal } {
  return { context: { requestId: req.id, principalId: req.principal?.id }, signal: clientGone(req) };
}

const clientSignals = new WeakMap<object, AbortSignal>();

/** One signal per request, however many bus calls it makes. */
function clientGone(req: AuthedRequest): AbortSignal {
  const known = clientSignals.get(req);
  if (known) return known;
  const controller = new AbortController();
  clientSignals.set(req, controller.signal);
  const res = (req as { res?: ServerResponse }).res;
  // `close` of the response also comes after a complete answer: only an unfinished one means the client left.
  if (res && !res.writableFinished) {
    if (res.destroyed) controller.abort();
    else res.once('close', () => res.writableFinished || controller.abort());
  }
  return controller.signal;
}
