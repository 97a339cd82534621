/** Who is calling, as resolved by the gateway from the one credential header of a request. */
export const CredentialKinds = ['user_token', 'pat', 'api_key', 'temporal_key', 'ua_key', 'ephemeral_token'] as const;
export type CredentialKind = (typeof CredentialKinds)[number];

/** KB roles, strongest first: SOWNER (Manager) > SCONTRIBUTOR (Writer) > SMEMBER (Reader). */
export const KbRoles = ['SOWNER', 'SCONTRIBUTOR', 'SMEMBER'] as const;
export type KbRole = (typeof KbRoles)[number];

export const AccountRoles = ['AOWNER', 'AMEMBER'] as const;
export type AccountRole = (typeof AccountRoles)[number];

/** Route-level role names (those of the reference system's routes). */
export type RouteRole = 'READER' | 'WRITER' | 'MANAGER';

const KB_ROLE_RANK: Record<KbRole, number> = { SMEMBER: 1, SCONTRIBUTOR: 2, SOWNER: 3 };
const ROUTE_ROLE_RANK: Record<RouteRole, number> = { READER: 1, WRITER: 2, MANAGER: 3 };

export function kbRoleSatisfies(role: KbRole | undefined, required: RouteRole): boolean {
  return role !== undefined && KB_ROLE_RANK[role] >= ROUTE_ROLE_RANK[required];
}

export function strongestKbRole(roles: (KbRole | undefined)[]): KbRole | undefined {
  let best: KbRole | undefined;
  for (const r of roles) if (r && (!best || KB_ROLE_RANK[r] > KB_ROLE_RANK[best])) best = r;
  return best;
}

/** API-key role names as the dashboard shows them. */
export const API_KEY_ROLE_TITLES: Record<KbRole, 'Manager' | 'Writer' | 'Reader'> = {
  SOWNER: 'Manager',
  SCONTRIBUTOR: 'Writer',
  SMEMBER: 'Reader',
};

export interface Principal {
  /** User id, service-account id or understanding-API client id. */
  id: string;
  kind: CredentialKind;
  /** Id of the token/key row; what revocation names. */
  credential_id: string;
  user_id?: string;
  /** The account the credential belongs to (keys), if any. */
  account_id?: string;
  /** The one KB an API key or temporal key opens. */
  kb_id?: string;
  /** Role held through the credential itself (keys). */
  key_role?: KbRole;
  /** Groups a temporal key carries; when present, only `/ask` routes are open. */
  security_groups?: string[];
  expires_at?: string;
}

/** What a principal may do on the target of one request, resolved by the accounts service. */
export interface AccessGrant {
  principal: Principal;
  /** Effective role on the requested KB, if a KB was named and the principal has one. */
  kb_role?: KbRole;
  /** Account of the requested KB or account path. */
  account_id?: string;
  account_role?: AccountRole;
  /** Whether the KB / account named by the request exists (absent when none was named). */
  kb_found?: boolean;
  account_found?: boolean;
  /** Set by the gateway's cache: the KB this grant was resolved for. */
  kb_found_id?: string;
}
