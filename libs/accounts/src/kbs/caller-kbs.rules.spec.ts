import { DomainError, ErrorCodes } from '@kb/contracts';
import { accountForNewKb, userRoleOnKb, type Membership } from './caller-kbs.rules';

const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';
const C = 'c0000000-0000-4000-8000-000000000003';

function outcome(memberships: Membership[], requested: string | null | undefined): string {
  try {
    return accountForNewKb(memberships, requested);
  } catch (err) {
    const e = err as DomainError;
    return e.code === ErrorCodes.VALIDATION_FAILED
      ? `422 ${JSON.stringify((e.details as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc))}`
      : e.code;
  }
}

describe('accountForNewKb', () => {
  it.each<[string, Membership[], string | null | undefined, string]>([
    [
      'the one owned account',
      [
        { accountId: A, role: 'AOWNER' },
        { accountId: B, role: 'AMEMBER' },
      ],
      undefined,
      A,
    ],
    ['no account owned', [{ accountId: B, role: 'AMEMBER' }], undefined, '422 [["body","account_id"]]'],
    ['no account at all', [], undefined, '422 [["body","account_id"]]'],
    [
      'several owned accounts',
      [
        { accountId: A, role: 'AOWNER' },
        { accountId: C, role: 'AOWNER' },
      ],
      undefined,
      '422 [["body","account_id"]]',
    ],
    [
      'a named owned account among several',
      [
        { accountId: A, role: 'AOWNER' },
        { accountId: C, role: 'AOWNER' },
      ],
      C,
      C,
    ],
    [
      'a named account where the caller is a member',
      [
        { accountId: A, role: 'AOWNER' },
        { accountId: B, role: 'AMEMBER' },
      ],
      B,
      ErrorCodes.FORBIDDEN,
    ],
    ['a named account of another tenant', [{ accountId: A, role: 'AOWNER' }], C, ErrorCodes.ACCOUNT_NOT_FOUND],
    ['a named account that does not exist', [{ accountId: A, role: 'AOWNER' }], null, ErrorCodes.ACCOUNT_NOT_FOUND],
  ])('%s', (_name, memberships, requested, expected) => {
    expect(outcome(memberships, requested)).toBe(expected);
  });
});

describe('userRoleOnKb', () => {
  const kb = { id: 'kb-1', accountId: A };
  it.each<[string, string[], [string, 'SOWNER' | 'SCONTRIBUTOR' | 'SMEMBER'][], string | undefined]>([
    ['owner of the account', [A], [], 'SOWNER'],
    ['KB role only (invited to the KB)', [], [['kb-1', 'SCONTRIBUTOR']], 'SCONTRIBUTOR'],
    ['the stronger of both', [A], [['kb-1', 'SMEMBER']], 'SOWNER'],
    ['a role on another KB only', [B], [['kb-2', 'SOWNER']], undefined],
  ])('%s', (_name, owned, roles, expected) => {
    expect(userRoleOnKb(kb, new Set(owned), new Map(roles))).toBe(expected);
  });
});
