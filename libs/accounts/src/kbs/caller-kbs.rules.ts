import { DomainError, ErrorCodes, strongestKbRole, type AccountRole, type KbRole } from '@kb/contracts';

export interface Membership {
  accountId: string;
  role: AccountRole;
}

/**
 * The account `POST /api/v1/kbs` creates a KB in. Only account owners create KBs (as on
 * `POST /account/{id}/kbs`). With `account_id` in the body: that account, if the caller owns it; an
 * account they are not a member of is "not found" whether it exists or not, so ids and slugs of other
 * tenants' accounts cannot be probed. Without it: the one account the caller owns, else a 422 asking
 * for `account_id` (several owned accounts would make the choice a guess).
 *
 * @param requested undefined when the body names no account; null when it names one that does not exist.
 */
export function accountForNewKb(memberships: Membership[], requested: string | null | undefined): string {
  if (requested !== undefined) {
    const membership = requested === null ? undefined : memberships.find((m) => m.accountId === requested);
    if (!membership) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    if (membership.role !== 'AOWNER')
      throw new DomainError(ErrorCodes.FORBIDDEN, 'Creating a Knowledge Box needs the account owner role (AOWNER)');
    return membership.accountId;
  }
  const owned = memberships.filter((m) => m.role === 'AOWNER');
  if (owned.length === 1) return (owned[0] as Membership).accountId;
  const msg =
    owned.length === 0
      ? 'You own no account to create the Knowledge Box in: name one you own, or create one first (POST /api/v1/accounts)'
      : `You own ${owned.length} accounts: name the one to create the Knowledge Box in`;
  throw DomainError.validation([{ loc: ['body', 'account_id'], msg, type: 'missing' }]);
}

/**
 * A user's role on a KB they can see: their KB role, or SOWNER on every KB of an account they own.
 * Undefined means the KB is not theirs to see (a mere account member sees only KBs they hold a role on,
 * as in `GET /account/{id}/kbs`).
 */
export function userRoleOnKb(
  kb: { id: string; accountId: string },
  ownedAccountIds: ReadonlySet<string>,
  kbRoles: ReadonlyMap<string, KbRole>,
): KbRole | undefined {
  return strongestKbRole([kbRoles.get(kb.id), ownedAccountIds.has(kb.accountId) ? 'SOWNER' : undefined]);
}
