import type { ActorDto, BusContext } from '@kb/contracts';
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
  };
}

/** `x-skip-store: true` on a write with files: processing reads them, then they are deleted (spec 4.2). */
export function skipStoreOf(req: AuthedRequest): boolean {
  return String(req.headers['x-skip-store'] ?? '').trim().toLowerCase() === 'true';
}

export function busContextOf(req: AuthedRequest): { context: BusContext } {
  return { context: { requestId: req.id, principalId: req.principal?.id } };
}
