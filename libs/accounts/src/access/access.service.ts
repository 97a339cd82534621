import { Inject, Injectable } from '@nestjs/common';
import {
  DEFAULT_EPHEMERAL_TOKEN_TTL_SECONDS,
  DomainError,
  ErrorCodes,
  MAX_TEMPORAL_KEY_TTL_SECONDS,
  strongestKbRole,
  type AccessGrant,
  type CheckAccessRequest,
  type CreateEphemeralTokenRequest,
  type CreateTemporalKeyRequest,
  type EphemeralTokenDto,
  type Principal,
  type TemporalKeyDto,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { parseToken, secretMatches } from '../credentials/secret-tokens';
import { signTemporalKey, verifyTemporalKey } from '../credentials/temporal-keys';
import { verifyUserToken } from '../credentials/user-tokens';
import { signEphemeralToken, verifyEphemeralToken } from '../credentials/ephemeral-tokens';
import { KbsRepository } from '../kbs/kbs.repository';
import { UsersRepository } from '../kbs/users.repository';
import { ServiceAccountsRepository } from '../service-accounts/service-accounts.repository';

const unauthenticated = (why: string) => new DomainError(ErrorCodes.UNAUTHENTICATED, why);

/**
 * Resolves a credential into a principal and its rights on the KB or account a request names.
 * Every failure is the same 401 to the caller: which part failed is not revealed.
 */
@Injectable()
export class AccessService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly users: UsersRepository,
    private readonly kbs: KbsRepository,
    private readonly serviceAccounts: ServiceAccountsRepository,
  ) {}

  async check(req: CheckAccessRequest): Promise<AccessGrant> {
    if (req.header === 'ephemeral') return this.grantForEphemeral(req);
    const principal = await this.authenticate(req);
    return principal.user_id ? this.grantForUser(principal, req) : this.grantForKey(principal, req);
  }

  private async authenticate(req: CheckAccessRequest): Promise<Principal> {
    if (req.header === 'serviceaccount')
      return req.token.startsWith('kbk_') ? this.authenticateApiKey(req.token) : this.authenticateTemporalKey(req.token);
    if (req.header === 'authorization') {
      return req.token.startsWith('kbp_') ? this.authenticatePat(req.token) : this.authenticateUserToken(req.token);
    }
    return this.authenticateUaKey(req.token);
  }

  private async authenticateUaKey(token: string): Promise<Principal> {
    const parsed = parseToken(token);
    if (!parsed || parsed.kind !== 'ua_key') throw unauthenticated('Invalid understanding-API key');
    const credential = await this.serviceAccounts.findCredential(parsed.id, 'ua_key');
    if (!credential || !secretMatches(parsed.secret, credential.salt, credential.secretHash, this.options.secret))
      throw unauthenticated('Invalid understanding-API key');
    const clients: { account_id: string }[] = await this.ds.query(`SELECT account_id FROM accounts.nua_clients WHERE internal_id = $1`, [
      credential.ownerId,
    ]);
    const client = clients[0];
    if (!client) throw unauthenticated('Invalid understanding-API key');
    return {
      id: credential.ownerId,
      kind: 'ua_key',
      credential_id: credential.id,
      account_id: client.account_id,
      expires_at: credential.expiresAt.toISOString(),
    };
  }

  private async authenticateApiKey(token: string): Promise<Principal> {
    const parsed = parseToken(token);
    if (!parsed || parsed.kind !== 'api_key') throw unauthenticated('Invalid API key');
    const credential = await this.serviceAccounts.findCredential(parsed.id, 'api_key');
    if (!credential || !secretMatches(parsed.secret, credential.salt, credential.secretHash, this.options.secret))
      throw unauthenticated('Invalid API key');
    const principal = await this.principalOfApiKey(credential.id);
    if (!principal) throw unauthenticated('API key expired');
    return principal;
  }

  /** A temporal key is as valid as its parent key, for at most its few seconds. */
  private async authenticateTemporalKey(token: string): Promise<Principal> {
    const claims = await verifyTemporalKey(this.options.secret, token);
    if (!claims) throw unauthenticated('Invalid or expired temporal key');
    const parent = await this.principalOfApiKey(claims.parentKeyId);
    if (!parent) throw unauthenticated('Invalid or expired temporal key');
    const expires = Math.min(claims.expires.getTime(), Date.parse(parent.expires_at ?? '') || Infinity);
    return {
      ...parent,
      kind: 'temporal_key',
      expires_at: new Date(expires).toISOString(),
      ...(claims.groups ? { security_groups: claims.groups } : {}),
    };
  }

  async createTemporalKey(req: CreateTemporalKeyRequest): Promise<TemporalKeyDto> {
    const ttl = Math.min(req.body.ttl ?? MAX_TEMPORAL_KEY_TTL_SECONDS, MAX_TEMPORAL_KEY_TTL_SECONDS);
    if (!(await this.principalOfApiKey(req.parent_key_id))) throw unauthenticated('Invalid API key');
    return { token: await signTemporalKey(this.options.secret, req.parent_key_id, ttl, req.body.security_groups ?? undefined) };
  }

  /**
   * The gateway has checked the caller's role on the KB (a user) or that the KB is the key's own;
   * the token carries no role: it is read-only wherever it is accepted.
   */
  async createEphemeralToken(req: CreateEphemeralTokenRequest): Promise<EphemeralTokenDto> {
    const ttl = req.body.ttl ?? DEFAULT_EPHEMERAL_TOKEN_TTL_SECONDS;
    const owner = req.user_id
      ? { kind: 'user' as const, id: req.user_id }
      : req.parent_key_id
        ? { kind: 'api_key' as const, id: req.parent_key_id }
        : null;
    if (!owner) throw unauthenticated('An ephemeral token is made by a user or an API key');
    if (owner.kind === 'api_key' && (await this.principalOfApiKey(owner.id))?.kb_id !== req.kbid) throw unauthenticated('Invalid API key');
    return { token: await signEphemeralToken(this.options.secret, { kbid: req.kbid, owner }, ttl, req.body.agent_session ?? undefined) };
  }

  /**
   * An ephemeral token (the `eph-token` query parameter): SMEMBER on its one KB while whoever made
   * it still holds a role there (the user still in the KB, the API key not revoked), nothing elsewhere.
   */
  private async grantForEphemeral(req: CheckAccessRequest): Promise<AccessGrant> {
    const claims = await verifyEphemeralToken(this.options.secret, req.token);
    if (!claims) throw unauthenticated('Invalid or expired ephemeral token');
    let expires = claims.expires.getTime();
    let credentialId = `eph:${claims.id}`;
    if (claims.owner.kind === 'api_key') {
      const parent = await this.principalOfApiKey(claims.owner.id);
      if (!parent || parent.kb_id !== claims.kbid) throw unauthenticated('Invalid or expired ephemeral token');
      expires = Math.min(expires, Date.parse(parent.expires_at ?? '') || Infinity);
      credentialId = parent.credential_id;
    } else if (!(await this.users.findUser(claims.owner.id))) {
      throw unauthenticated('Invalid or expired ephemeral token');
    }
    const kb = await this.kbs.findById(claims.kbid);
    if (!kb) throw unauthenticated('Invalid or expired ephemeral token');
    const principal: Principal = {
      id: claims.owner.id,
      kind: 'ephemeral_token',
      credential_id: credentialId,
      account_id: kb.accountId,
      kb_id: kb.id,
      key_role: 'SMEMBER',
      expires_at: new Date(expires).toISOString(),
    };
    const grant: AccessGrant = { principal, account_id: kb.accountId };
    if (req.kbid !== kb.id) return { ...grant, kb_found: req.kbid ? (await this.kbs.findById(req.kbid)) !== null : undefined };
    if (claims.owner.kind === 'user') {
      const accountRole = await this.users.accountRole(kb.accountId, claims.owner.id);
      const role = strongestKbRole([await this.kbs.roleOf(kb.id, claims.owner.id), accountRole === 'AOWNER' ? 'SOWNER' : undefined]);
      if (!role) return { ...grant, kb_found: true };
    }
    return { ...grant, kb_found: true, kb_role: 'SMEMBER' };
  }

  private async principalOfApiKey(credentialId: string): Promise<Principal | null> {
    const credential = await this.serviceAccounts.findCredential(credentialId, 'api_key');
    if (!credential || credential.expiresAt.getTime() <= Date.now()) return null;
    const sa = await this.serviceAccounts.findById(credential.ownerId);
    if (!sa) return null;
    return {
      id: sa.id,
      kind: 'api_key',
      credential_id: credential.id,
      account_id: sa.accountId,
      kb_id: sa.kbId,
      key_role: sa.role,
      expires_at: credential.expiresAt.toISOString(),
    };
  }

  private async authenticatePat(token: string): Promise<Principal> {
    const parsed = parseToken(token);
    if (!parsed || parsed.kind !== 'pat') throw unauthenticated('Invalid personal access token');
    const credential = await this.serviceAccounts.findCredential(parsed.id, 'pat');
    if (!credential || !secretMatches(parsed.secret, credential.salt, credential.secretHash, this.options.secret))
      throw unauthenticated('Invalid personal access token');
    if (credential.expiresAt.getTime() <= Date.now()) throw unauthenticated('Personal access token expired');
    const user = await this.users.findUser(credential.ownerId);
    if (!user) throw unauthenticated('Invalid personal access token');
    return { id: user.id, kind: 'pat', credential_id: credential.id, user_id: user.id, expires_at: credential.expiresAt.toISOString() };
  }

  private async authenticateUserToken(token: string): Promise<Principal> {
    const verified = await verifyUserToken(this.options.secret, token);
    if (!verified) throw unauthenticated('Invalid or expired user token');
    const user = await this.users.findUser(verified.userId);
    if (!user) throw unauthenticated('Invalid or expired user token');
    return { id: user.id, kind: 'user_token', credential_id: verified.id, user_id: user.id, expires_at: verified.expires.toISOString() };
  }

  private async grantForUser(principal: Principal, req: CheckAccessRequest): Promise<AccessGrant> {
    const userId = principal.user_id as string;
    const grant: AccessGrant = { principal };
    if (req.kbid) {
      const kb = await this.kbs.findById(req.kbid);
      if (!kb) return { ...grant, kb_found: false };
      const accountRole = await this.users.accountRole(kb.accountId, userId);
      // Account owners manage every KB of their account.
      const kbRole = strongestKbRole([await this.kbs.roleOf(kb.id, userId), accountRole === 'AOWNER' ? 'SOWNER' : undefined]);
      return { ...grant, kb_found: true, kb_role: kbRole, account_id: kb.accountId, account_role: accountRole };
    }
    if (req.account) {
      const account = await this.users.findAccount(req.account);
      if (!account) return { ...grant, account_found: false };
      return { ...grant, account_found: true, account_id: account.id, account_role: await this.users.accountRole(account.id, userId) };
    }
    return grant;
  }

  private async grantForKey(principal: Principal, req: CheckAccessRequest): Promise<AccessGrant> {
    const grant: AccessGrant = { principal, account_id: principal.account_id };
    if (req.kbid && principal.kind === 'ua_key') {
      // An understanding-API key acts within its own account's KBs only (the predict routes' `/{kbid}` variants).
      const kb = await this.kbs.findInAccount(principal.account_id ?? '', req.kbid);
      return { ...grant, kb_found: kb !== null };
    }
    if (req.kbid) {
      if (req.kbid !== principal.kb_id) return { ...grant, kb_found: (await this.kbs.findById(req.kbid)) !== null };
      return { ...grant, kb_found: true, kb_role: principal.key_role };
    }
    if (req.account) {
      const account = await this.users.findAccount(req.account);
      return { ...grant, account_found: account !== null, account_id: account?.id };
    }
    return grant;
  }
}
