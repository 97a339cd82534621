import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import {
  DomainError,
  EPHEMERAL_TOKEN_PARAM,
  ErrorCodes,
  kbRoleSatisfies,
  type AccessGrant,
  type CredentialHeader,
  type Principal,
  type ValidationIssue,
} from '@kb/contracts';
import { accessRuleFor, type AccessRule } from './access-table';
import { AccessClient } from './access-client';
import { presentedCredentials } from './credential-header';

export const ACCESS_CLIENT = Symbol('ACCESS_CLIENT');

export interface AuthedRequest extends Request {
  id?: string;
  principal?: Principal;
  grant?: AccessGrant;
}

const forbidden = (msg: string) => new DomainError(ErrorCodes.FORBIDDEN, msg);

/** Path parameters that are always ids of uuid columns: anything else is refused before it reaches SQL. */
const UUID_PARAMS = ['kbid', 'kb_id', 'rid', 'sa_id', 'sa_key_id', 'token_id'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function malformedIds(params: Record<string, unknown>): ValidationIssue[] {
  return UUID_PARAMS.filter((name) => typeof params[name] === 'string' && !UUID.test(params[name] as string)).map((name) => ({
    loc: ['path', name],
    msg: 'Input should be a valid UUID',
    type: 'uuid_parsing',
  }));
}

/** Decides every request from the access table. The only place the service makes this decision. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(@Inject(ACCESS_CLIENT) private readonly access: AccessClient) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    const path = (req.route as { path?: string } | undefined)?.path ?? req.path;
    const rule = accessRuleFor(req.method, path);
    if (!rule) throw new DomainError(ErrorCodes.INTERNAL, `No access rule for ${req.method} ${path}`);
    const credential = this.credentialOf(req, rule);
    if (rule.scope === 'public') return true;
    if (!credential)
      throw new DomainError(
        ErrorCodes.UNAUTHENTICATED,
        'This route needs a credential: Authorization, X-SVC-SERVICEACCOUNT or X-SVC-UAKEY',
      );
    const badIds = malformedIds(req.params);
    if (badIds.length > 0) throw DomainError.validation(badIds);

    const target = this.target(rule, req);
    const grant = await this.access.check({ header: credential.header, token: credential.token, ...target });
    req.principal = grant.principal;
    req.grant = grant;
    this.authorize(rule, grant, req);
    return true;
  }

  /**
   * The request's one credential: a header, or the `eph-token` query parameter. Both at once are
   * refused like two headers; an ephemeral token is refused on every route but the downloads.
   */
  private credentialOf(req: Request, rule: AccessRule): { header: CredentialHeader; token: string } | null {
    const { header, ephemeral: eph } = presentedCredentials(req);
    if (eph === undefined) return header;
    if (rule.scope === 'public') return null;
    if (rule.scope !== 'kb' || !rule.credentials.includes('ephemeral_token')) {
      throw new DomainError(
        ErrorCodes.UNAUTHENTICATED,
        `An ${EPHEMERAL_TOKEN_PARAM} opens only the download routes of its Knowledge Box; this route needs a credential header`,
      );
    }
    return { header: 'ephemeral', token: eph };
  }

  private target(rule: AccessRule, req: Request): { kbid?: string; account?: string } {
    if (rule.scope === 'kb' || (rule.scope === 'ua-key' && rule.kbParam)) return { kbid: String(req.params[rule.kbParam ?? ''] ?? '') };
    if (rule.scope === 'account') return { account: String(req.params[rule.accountParam] ?? '') };
    return {};
  }

  private authorize(rule: AccessRule, grant: AccessGrant, req: Request): void {
    const p = grant.principal;
    const groupScoped = rule.scope === 'kb' && rule.groupScoped === true;
    if (p.security_groups && p.security_groups.length > 0 && !groupScoped)
      throw forbidden('A temporal key with security groups opens only the /ask endpoints');
    switch (rule.scope) {
      case 'user':
        if (!p.user_id) throw forbidden('This route is for users (user token or personal access token)');
        return;
      case 'api-key':
        if (p.kind !== 'api_key') throw forbidden('Temporal keys are created with an API key (X-SVC-SERVICEACCOUNT)');
        return;
      case 'ua-key':
        if (p.kind !== 'ua_key' || !p.account_id) throw forbidden('This route is for understanding-API clients (X-SVC-UAKEY)');
        // A KB of another account is as unknown to the key as a missing one.
        if (rule.kbParam && grant.kb_found !== true) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
        return;
      case 'caller':
        if (!rule.credentials.includes(p.kind)) throw forbidden(`This route does not accept ${p.kind.replace('_', ' ')} credentials`);
        return;
      case 'account':
        if (!rule.credentials.includes(p.kind)) throw forbidden(`This route does not accept ${p.kind.replace('_', ' ')} credentials`);
        if (grant.account_found === false) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
        if (!grant.account_role) throw forbidden('You are not a member of this account');
        if (rule.role === 'AOWNER' && grant.account_role !== 'AOWNER') throw forbidden('This action needs the account owner role (AOWNER)');
        return;
      case 'kb': {
        if (!rule.credentials.includes(p.kind)) throw forbidden(`This route does not accept ${p.kind.replace('_', ' ')} credentials`);
        if (grant.kb_found === false && p.user_id) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
        // A KB of an account the user is not in, and holds no role on, is as unknown to them as a
        // missing one: a 403 would confirm that the id exists. (Keys get 403 for every other id alike.)
        if (p.user_id && !grant.kb_role && !grant.account_role) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
        if (rule.accountParam && grant.kb_role && grant.account_id !== req.params[rule.accountParam]) {
          throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found in this account');
        }
        if (!kbRoleSatisfies(grant.kb_role, rule.role)) {
          throw forbidden(
            grant.kb_role
              ? `This action needs the ${rule.role} role on the Knowledge Box; you have ${grant.kb_role}`
              : 'No access to this Knowledge Box',
          );
        }
        return;
      }
      default:
        return;
    }
  }
}
