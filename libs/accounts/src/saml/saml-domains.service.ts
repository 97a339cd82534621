import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  ErrorCodes,
  type ClaimSamlDomainRequest,
  type SamlDomainDto,
  type SamlDomainsRef,
  type VerifySamlDomainRequest,
} from '@kb/contracts';
import { DOMAIN_RESOLVER } from '../accounts.tokens';
import { UsersRepository } from '../kbs/users.repository';
import { CHALLENGE_PREFIX, VERIFICATION_PREFIX, domainHasToken, type TxtResolver } from './domain-resolver';
import { SamlDomainsRepository, type DomainClaim } from './saml-domains.repository';

const squatted = (domain: string) =>
  new DomainError(ErrorCodes.CONFLICT, `The domain ${domain} is already verified for single sign-on by another account`);

/**
 * Which account may send an e-mail domain's users to its identity provider: the one that proved it
 * controls the domain's DNS by publishing its per-claim token in a TXT record. Until then the domain
 * is a pending claim: discovery ignores it and the assertion consumer refuses its addresses.
 */
@Injectable()
export class SamlDomainsService {
  constructor(
    @Inject(DOMAIN_RESOLVER) private readonly resolver: TxtResolver,
    private readonly repo: SamlDomainsRepository,
    private readonly users: UsersRepository,
  ) {}

  async list(ref: SamlDomainsRef): Promise<SamlDomainDto[]> {
    const accountId = await this.requireAccountId(ref.account);
    return (await this.repo.list(accountId)).map(toDto);
  }

  async claim(req: ClaimSamlDomainRequest): Promise<SamlDomainDto> {
    const accountId = await this.requireAccountId(req.account);
    const domain = req.body.domain.toLowerCase();
    await this.assertClaimable(accountId, [domain]);
    await this.repo.claim(accountId, domain);
    return toDto((await this.repo.find(accountId, domain)) as DomainClaim);
  }

  /** Looks the token up in DNS now; a domain without the record stays `pending` (200), one another account verified first is a 409. */
  async verify(req: VerifySamlDomainRequest): Promise<SamlDomainDto> {
    const accountId = await this.requireAccountId(req.account);
    const domain = req.domain.toLowerCase();
    const claim = await this.repo.find(accountId, domain);
    if (!claim)
      throw new DomainError(
        ErrorCodes.NOT_FOUND,
        `This account has no claim on ${domain}: add it to saml_config.domains or claim it first`,
      );
    if (claim.verifiedAt) return toDto(claim);
    await this.assertClaimable(accountId, [domain]);
    if (await domainHasToken(this.resolver, domain, claim.token)) {
      // Two accounts proving the same domain at once: the unique index lets one win; the other is told why.
      await this.repo.markVerified(accountId, domain).catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505' || (err as { driverError?: { code?: string } }).driverError?.code === '23505')
          throw squatted(domain);
        throw err;
      });
    } else {
      await this.repo.markChecked(accountId, domain);
    }
    return toDto((await this.repo.find(accountId, domain)) as DomainClaim);
  }

  /** Refuses domains another account already verified (a saml_config naming them, or a claim). */
  async assertClaimable(accountId: string, domains: readonly string[]): Promise<void> {
    if (domains.length === 0) return;
    const taken = await this.repo.verifiedElsewhere(domains, accountId);
    if (taken) throw squatted(taken.domain);
  }

  /** After a saml_config change: a pending claim per new domain, none for domains no longer configured. */
  async sync(accountId: string, domains: readonly string[]): Promise<void> {
    await this.repo.sync(accountId, [...new Set(domains.map((d) => d.toLowerCase()))]);
  }

  isVerified(accountId: string, domain: string): Promise<boolean> {
    return this.repo.isVerified(accountId, domain);
  }

  private async requireAccountId(idOrSlug: string): Promise<string> {
    const account = await this.users.findAccount(idOrSlug);
    if (!account) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
    return account.id;
  }
}

function toDto(c: DomainClaim): SamlDomainDto {
  return {
    domain: c.domain,
    status: c.verifiedAt ? 'verified' : 'pending',
    verified_at: c.verifiedAt ? new Date(c.verifiedAt).toISOString() : null,
    checked_at: c.checkedAt ? new Date(c.checkedAt).toISOString() : null,
    record: { type: 'TXT', name: `${CHALLENGE_PREFIX}.${c.domain}`, value: `${VERIFICATION_PREFIX}${c.token}` },
  };
}
