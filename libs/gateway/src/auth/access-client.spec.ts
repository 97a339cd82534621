import { AccountsSubjects, type AccessGrant, type CheckAccessRequest, type Principal } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { AccessClient } from './access-client';

/** A bus that answers checkAccess from a table and lets the test deliver broadcast events. */
function fakeBus(grants: Record<string, AccessGrant>) {
  const handlers = new Map<string, (e: unknown) => Promise<void>>();
  let requests = 0;
  const bus = {
    subscribe: async (def: { subject: string }, handler: (e: unknown) => Promise<void>) => {
      handlers.set(def.subject, handler);
    },
    request: async (_def: unknown, req: CheckAccessRequest) => {
      requests++;
      const grant = grants[req.token];
      if (!grant) throw new Error(`no grant for ${req.token}`);
      return grant;
    },
  } as unknown as MessageBus;
  return {
    bus,
    requests: () => requests,
    deliver: (def: { subject: string }, e: unknown) => handlers.get(def.subject)?.(e),
  };
}

const grant = (over: Omit<Partial<AccessGrant>, 'principal'> & { principal: Partial<Principal> }): AccessGrant =>
  ({ ...over, principal: { id: 'p', kind: 'user', credential_id: 'c', ...over.principal } }) as AccessGrant;

describe('AccessClient: grants cached and evicted by broadcast', () => {
  const grants = {
    owner: grant({ principal: { user_id: 'u1', credential_id: 'tok-1' }, account_id: 'acc-1', account_role: 'AOWNER' }),
    key: grant({ principal: { kind: 'api_key', credential_id: 'key-1', account_id: 'acc-1', kb_id: 'kb-1' }, kb_role: 'SOWNER' }),
    other: grant({ principal: { user_id: 'u2', credential_id: 'tok-2' }, account_id: 'acc-2', account_role: 'AOWNER' }),
  } as Record<string, AccessGrant>;
  const ask = (client: AccessClient, token: string, account?: string) =>
    client.check({ header: 'authorization', token, account } as CheckAccessRequest);

  it('reuses a grant until an event names it: the account deleted voids its routes and its keys, not another account', async () => {
    const f = fakeBus(grants);
    const client = new AccessClient(f.bus, { ttlSeconds: 60, maxEntries: 100 });
    await client.start();
    await ask(client, 'owner', 'acc-1');
    await ask(client, 'key');
    await ask(client, 'other', 'acc-2');
    await ask(client, 'owner', 'acc-1');
    expect(f.requests()).toBe(3);

    await f.deliver(AccountsSubjects.accessChanged, { kb_ids: [], account_ids: ['acc-1'] });
    expect(client.size()).toBe(1);
    await ask(client, 'owner', 'acc-1');
    await ask(client, 'key');
    await ask(client, 'other', 'acc-2');
    expect(f.requests()).toBe(5);
  });

  it('a KB named by an event voids the grants resolved for it; a revoked credential its own', async () => {
    const f = fakeBus(grants);
    const client = new AccessClient(f.bus, { ttlSeconds: 60, maxEntries: 100 });
    await client.start();
    await ask(client, 'key');
    await ask(client, 'other', 'acc-2');
    await f.deliver(AccountsSubjects.accessChanged, { kb_ids: ['kb-1'] });
    expect(client.size()).toBe(1);
    await f.deliver(AccountsSubjects.credentialRevoked, { credential_ids: ['tok-2'] });
    expect(client.size()).toBe(0);
  });
});
