import { Inject, Injectable } from '@nestjs/common';
import { SAML, ValidateInResponseTo, generateServiceProviderMetadata, type CacheProvider, type RacComparison } from '@node-saml/node-saml';
import {
  AccountsSubjects,
  DomainError,
  ErrorCodes,
  type SamlAccountRef,
  type SamlAcsRequest,
  type SamlLinkRequest,
  type SamlLoginDto,
  type SamlLoginRequest,
  type SamlMetadataDto,
  type SsoDiscoverRequest,
  type SsoDiscoveryDto,
  type UserTokenDto,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';
import type { AccountEntity } from '../entities/account.entity';
import { UsersRepository } from '../kbs/users.repository';
import { UsersService } from '../users/users.service';
import { emailDomain, idpConfigOf, readAssertion, responseDestination, type IdpConfig } from './saml-assertion';
import { SamlDomainsService } from './saml-domains.service';
import { SamlRepository } from './saml.repository';

/** Clocks of the IdP and ours may disagree a little; more than this and the assertion is refused. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** An AuthnRequest must be answered within this time (a person typing a password at the IdP). */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const COMPARISONS: readonly string[] = ['exact', 'minimum', 'maximum', 'better'];

const refuse = (why: string): never => {
  throw new DomainError(ErrorCodes.UNAUTHENTICATED, `Single sign-on refused: ${why}`);
};

/**
 * The SAML 2.0 service provider, one per account: SP metadata, AuthnRequests (HTTP-Redirect) and the
 * assertion consumer. node-saml verifies signatures, audience, time conditions and that InResponseTo
 * names a pending request; this service adds what it leaves out: Destination, Recipient, Issuer,
 * single use of the request, assertion replay, and the e-mail domain (configured and verified).
 * Who is signed in is decided by the IdP identity, never by the e-mail address alone: an IdP signs in
 * the users it created and those who linked it while signed in (a link request bound to them).
 */
@Injectable()
export class SamlService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
    private readonly users: UsersRepository,
    private readonly usersService: UsersService,
    private readonly repo: SamlRepository,
    private readonly domains: SamlDomainsService,
  ) {}

  async discover(req: SsoDiscoverRequest): Promise<SsoDiscoveryDto> {
    const domain = emailDomain(req.email);
    const accountId = domain ? await this.repo.findAccountIdByDomain(domain) : null;
    return accountId ? { account_id: accountId, login_path: `/api/v1/saml/${accountId}/login` } : { account_id: null };
  }

  /** Served even before an IdP is configured: the IdP's administrator needs it to set us up. */
  async metadata(ref: SamlAccountRef): Promise<SamlMetadataDto> {
    const account = await this.requireAccount(ref.account_id);
    const sp = this.spUrls(account.id);
    return {
      xml: generateServiceProviderMetadata({
        issuer: sp.entityId,
        callbackUrl: sp.acsUrl,
        identifierFormat: EMAIL_FORMAT,
        wantAssertionsSigned: true,
      }),
    };
  }

  async login(req: SamlLoginRequest): Promise<SamlLoginDto> {
    return this.start(req, null);
  }

  /**
   * The link intent: the AuthnRequest id is stored with the signed-in user who asked (the gateway
   * only lets a user credential call this), so only the answer to THIS request attaches an identity,
   * and only to them. Nobody can start a request bound to another user.
   */
  async link(req: SamlLinkRequest): Promise<SamlLoginDto> {
    return this.start(req, req.user_id);
  }

  private async start(req: SamlLoginRequest, linkUserId: string | null): Promise<SamlLoginDto> {
    const account = await this.requireAccount(req.account_id);
    const idp = idpConfigOf(account);
    if (!idp) throw new DomainError(ErrorCodes.NOT_FOUND, 'Single sign-on is not configured for this account');
    await this.repo.purgeExpired();
    return { redirect_url: await this.saml(account, idp, linkUserId).getAuthorizeUrlAsync(req.relay_state ?? '', undefined, {}) };
  }

  async acs(req: SamlAcsRequest): Promise<UserTokenDto> {
    const account = await this.users.findAccount(req.account_id);
    const idp = account ? idpConfigOf(account) : null;
    if (!account || !idp) return refuse('single sign-on is not configured for this account');
    const { acsUrl } = this.spUrls(account.id);

    const profile = await this.saml(account, idp)
      .validatePostResponseAsync({ SAMLResponse: req.saml_response })
      .then(
        (r) => r.profile,
        (err: unknown) => refuse(`the identity provider's response is not valid (${err instanceof Error ? err.message : String(err)})`),
      );
    if (!profile?.getAssertionXml || !profile.getSamlResponseXml) return refuse('the response carries no assertion');
    const facts = await readAssertion(profile.getAssertionXml());
    const destination = await responseDestination(profile.getSamlResponseXml());
    if (destination !== null && destination !== acsUrl) refuse(`the response's Destination is ${destination}, not this account's ACS URL`);
    if (facts.recipients.length === 0 || facts.recipients.some((r) => r !== acsUrl))
      refuse(`the assertion's Recipient is ${facts.recipients.join(', ') || 'missing'}, not this account's ACS URL`);
    if (facts.issuer !== idp.entityId)
      refuse(`the assertion was issued by ${facts.issuer ?? 'an unnamed issuer'}, not the configured identity provider`);
    if (!facts.id) refuse('the assertion has no ID');
    if (!facts.notOnOrAfter) refuse('the assertion has no NotOnOrAfter');
    if (!facts.email) refuse('the assertion names no e-mail address (NameID or an email attribute)');
    const email = facts.email as string;
    const domain = emailDomain(email);
    if (!domain || !idp.domains.includes(domain)) refuse(`${email} is not in a domain of this account's single sign-on`);
    if (!(await this.domains.isVerified(account.id, domain as string)))
      refuse(`the domain ${domain} is not verified for this account (publish its DNS TXT record and verify it)`);
    const inResponseTo = profile['inResponseTo'];
    if (typeof inResponseTo !== 'string') return refuse('the response answers no request of ours');

    // Replay first, so a resent response is reported as what it is; both are single atomic statements.
    const rememberUntil = new Date(Math.max((facts.notOnOrAfter as Date).getTime(), Date.now()) + SAML_CLOCK_SKEW_MS);
    if (!(await this.repo.recordAssertion(account.id, facts.id, rememberUntil))) refuse('this assertion was already used (replay)');
    const request = await this.repo.consumeRequest(account.id, inResponseTo);
    if (!request) return refuse('the request this response answers was already used or has expired');

    const identity = { accountId: account.id, entityId: idp.entityId, subject: facts.subject ?? email };
    const linkUserId = request.linkUserId;
    const userId = await this.outbox.commit(this.ds, async (m) => {
      const signedIn = linkUserId
        ? await this.repo.linkIdentity(identity, linkUserId, m)
        : await this.repo.signInIdentity(identity, email, facts.name, m);
      return {
        result: signedIn.userId,
        events: signedIn.joined ? [outboxEvent(AccountsSubjects.accessChanged, { user_ids: [signedIn.userId] })] : [],
      };
    });
    return this.usersService.issueToken(userId);
  }

  spUrls(accountId: string): { entityId: string; acsUrl: string } {
    const base = `${this.options.publicBaseUrl.replace(/\/+$/, '')}/api/v1/saml/${accountId}`;
    return { entityId: `${base}/metadata`, acsUrl: `${base}/acs` };
  }

  private async requireAccount(idOrSlug: string): Promise<AccountEntity> {
    const account = await this.users.findAccount(idOrSlug);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    return account;
  }

  private saml(account: AccountEntity, idp: IdpConfig, linkUserId: string | null = null): SAML {
    const sp = this.spUrls(account.id);
    return new SAML({
      idpCert: idp.cert,
      entryPoint: idp.ssoUrl,
      issuer: sp.entityId,
      audience: sp.entityId,
      callbackUrl: sp.acsUrl,
      identifierFormat: EMAIL_FORMAT,
      ...requestedAuthnContext(idp.authnContext),
      // Either signature is enough: node-saml then requires the assertion itself to be signed when the response is not.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
      cacheProvider: this.requestStore(account.id, linkUserId),
    });
  }

  /** node-saml's request-id cache, on the database (several gateway/accounts replicas share it). */
  private requestStore(accountId: string, linkUserId: string | null): CacheProvider {
    return {
      saveAsync: async (key, value) => {
        await this.repo.saveRequest(accountId, key, new Date(Date.now() + SAML_REQUEST_TTL_MS), linkUserId);
        return { value, createdAt: Date.now() };
      },
      getAsync: async (key) => (await this.repo.requestIssuedAt(accountId, key))?.toISOString() ?? null,
      // Removal is done by consumeRequest after every other check passed, atomically; a refused response leaves the request usable.
      removeAsync: async (key) => key,
    };
  }
}

/** authn_context is a comparison (sample "exact") or, when it is a URN, the class to request. */
function requestedAuthnContext(value: string): { racComparison?: RacComparison; authnContext?: string[] } {
  if (COMPARISONS.includes(value)) return { racComparison: value as RacComparison };
  if (value.includes(':')) return { authnContext: [value], racComparison: 'exact' };
  return {};
}
