import type { ExecutionContext } from '@nestjs/common';
import { DomainError, ErrorCodes, type AccessGrant, type CheckAccessRequest } from '@kb/contracts';
import type { AccessClient } from './access-client';
import { AuthGuard } from './auth.guard';

const KB1 = '1b000000-0000-4000-8000-000000000001';
const R1 = '2c000000-0000-4000-8000-000000000001';
const K = '3d000000-0000-4000-8000-000000000001';
const KEY = 'kbk_' + 'a'.repeat(32) + '_' + 'b'.repeat(43);

function context(method: string, path: string, params: Record<string, string>, headers: Record<string, string>): ExecutionContext {
  const req = { method, route: { path }, path, params, headers };
  return { switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
}

function guardAnswering(grant: Partial<AccessGrant> | DomainError): { guard: AuthGuard; calls: CheckAccessRequest[] } {
  const calls: CheckAccessRequest[] = [];
  const client = {
    check: async (req: CheckAccessRequest) => {
      calls.push(req);
      if (grant instanceof DomainError) throw grant;
      return { principal: { id: 'p', kind: 'api_key', credential_id: 'c' }, ...grant } as AccessGrant;
    },
  } as unknown as AccessClient;
  return { guard: new AuthGuard(client), calls };
}

async function outcome(guard: AuthGuard, ctx: ExecutionContext): Promise<string> {
  try {
    return (await guard.canActivate(ctx)) ? 'allowed' : 'denied';
  } catch (err) {
    return (err as DomainError).code;
  }
}

const apiKeyHeaders = { 'x-svc-serviceaccount': `Bearer ${KEY}` };
const resource = (method: string) => context(method, '/api/v1/kb/:kbid/resource/:rid', { kbid: KB1, rid: R1 }, apiKeyHeaders);
const userPrincipal = { id: 'u', kind: 'pat' as const, credential_id: 'c', user_id: 'u' };

describe('AuthGuard', () => {
  it.each([
    ['Reader reads', resource('GET'), { kb_role: 'SMEMBER' as const }, 'allowed'],
    ['Reader writes', resource('PATCH'), { kb_role: 'SMEMBER' as const }, ErrorCodes.FORBIDDEN],
    ['Writer writes', resource('DELETE'), { kb_role: 'SCONTRIBUTOR' as const }, 'allowed'],
    ['key of another KB', resource('GET'), { kb_found: true }, ErrorCodes.FORBIDDEN],
    [
      'temporal key with groups outside /ask',
      resource('GET'),
      { kb_role: 'SOWNER' as const, principal: { id: 'p', kind: 'temporal_key' as const, credential_id: 'c', security_groups: ['g'] } },
      ErrorCodes.FORBIDDEN,
    ],
    ['user on a missing KB', resource('GET'), { kb_found: false, principal: userPrincipal }, ErrorCodes.KB_NOT_FOUND],
    // Existence must not leak: another tenant's KB looks like a missing one to a user outside its account.
    [
      'user on a KB of an account they are not in',
      resource('GET'),
      { kb_found: true, account_id: 'other', principal: userPrincipal },
      ErrorCodes.KB_NOT_FOUND,
    ],
    [
      'account member without a role on the KB',
      resource('GET'),
      { kb_found: true, account_id: 'a', account_role: 'AMEMBER' as const, principal: userPrincipal },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'user invited to the KB only',
      resource('GET'),
      { kb_found: true, kb_role: 'SMEMBER' as const, account_id: 'a', principal: userPrincipal },
      'allowed',
    ],
    ['API key listing its KBs', context('GET', '/api/v1/kbs', {}, apiKeyHeaders), {}, 'allowed'],
    [
      'UA key listing KBs',
      context('GET', '/api/v1/kbs', {}, apiKeyHeaders),
      { principal: { id: 'c', kind: 'ua_key' as const, credential_id: 'c', account_id: 'a' } },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'API key creating a KB on the standalone path',
      context('POST', '/api/v1/kbs', {}, apiKeyHeaders),
      { kb_role: 'SOWNER' as const },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'Manager key deleting its KB on the standalone path',
      context('DELETE', '/api/v1/kb/:kbid', { kbid: KB1 }, apiKeyHeaders),
      { kb_role: 'SOWNER' as const },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'Manager key modifying its KB',
      context('PATCH', '/api/v1/kb/:kbid', { kbid: KB1 }, apiKeyHeaders),
      { kb_role: 'SOWNER' as const },
      'allowed',
    ],
    [
      'Writer key modifying its KB',
      context('PATCH', '/api/v1/kb/:kbid', { kbid: KB1 }, apiKeyHeaders),
      { kb_role: 'SCONTRIBUTOR' as const },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'API key on an account route',
      context('POST', '/api/v1/account/:account_id/kbs', { account_id: 'a' }, apiKeyHeaders),
      { account_role: 'AOWNER' as const },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'account member creating a KB',
      context('POST', '/api/v1/account/:account_id/kbs', { account_id: 'a' }, apiKeyHeaders),
      { account_role: 'AMEMBER' as const, principal: userPrincipal },
      ErrorCodes.FORBIDDEN,
    ],
    [
      'account owner creating a KB',
      context('POST', '/api/v1/account/:account_id/kbs', { account_id: 'a' }, apiKeyHeaders),
      { account_role: 'AOWNER' as const, principal: userPrincipal },
      'allowed',
    ],
    [
      'KB of another account',
      context('PATCH', '/api/v1/account/:account_id/kb/:kb_id', { account_id: 'a', kb_id: K }, apiKeyHeaders),
      { kb_role: 'SOWNER' as const, account_id: 'other', principal: userPrincipal },
      ErrorCodes.KB_NOT_FOUND,
    ],
  ])('%s → %s', async (_name, ctx, grant, expected) => {
    expect(await outcome(guardAnswering(grant).guard, ctx)).toBe(expected);
  });

  it('asks accounts about the KB of the path', async () => {
    const { guard, calls } = guardAnswering({ kb_role: 'SMEMBER' });
    await guard.canActivate(resource('GET'));
    expect(calls).toEqual([{ header: 'serviceaccount', token: KEY, kbid: KB1 }]);
  });

  it('refuses a request without a credential with 401 and never asks accounts', async () => {
    const { guard, calls } = guardAnswering({ kb_role: 'SOWNER' });
    expect(await outcome(guard, context('GET', '/api/v1/kb/:kbid/resources', { kbid: KB1 }, {}))).toBe(ErrorCodes.UNAUTHENTICATED);
    expect(calls).toEqual([]);
  });

  it('passes an unknown credential through as 401', async () => {
    const { guard } = guardAnswering(new DomainError(ErrorCodes.UNAUTHENTICATED, 'Invalid API key'));
    expect(await outcome(guard, resource('GET'))).toBe(ErrorCodes.UNAUTHENTICATED);
  });

  it('lets health checks through without a credential, and fails closed on a route missing from the table', async () => {
    const { guard } = guardAnswering({});
    expect(await outcome(guard, context('GET', '/health/ready', {}, {}))).toBe('allowed');
    expect(await outcome(guard, context('GET', '/api/v1/secret', {}, apiKeyHeaders))).toBe(ErrorCodes.INTERNAL);
  });

  it('refuses a path id that is not a uuid with 422 naming it, before asking accounts (it would reach a uuid column)', async () => {
    const { guard, calls } = guardAnswering({ kb_role: 'SOWNER' as const });
    await expect(
      guard.canActivate(context('GET', '/api/v1/kb/:kbid/resource/:rid', { kbid: KB1, rid: 'undefined' }, apiKeyHeaders)),
    ).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
      details: { detail: [{ loc: ['path', 'rid'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }] },
    });
    expect(calls).toEqual([]);
  });
});
