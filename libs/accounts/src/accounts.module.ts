import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccessService } from './access/access.service';
import { AccountQuotaService } from './accounts/account-quota.service';
import { AccountUsersService } from './accounts/account-users.service';
import { AccountsService } from './accounts/accounts.service';
import { InvitesService } from './invites/invites.service';
import { KbUsersService } from './kbs/kb-users.service';
import { ModelConfigService } from './kbs/model-config.service';
import { NuaClientsService } from './nua-clients/nua-clients.service';
import { AccountsHandlers } from './accounts.handlers';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, DOMAIN_RESOLVER, type AccountsOptions } from './accounts.tokens';
import { BootstrapService } from './bootstrap/bootstrap.service';
import { KbsRepository } from './kbs/kbs.repository';
import { KbsService } from './kbs/kbs.service';
import { CallerKbsService } from './kbs/caller-kbs.service';
import { UsersRepository } from './kbs/users.repository';
import { ServiceAccountsRepository } from './service-accounts/service-accounts.repository';
import { ServiceAccountsService } from './service-accounts/service-accounts.service';
import { PersonalTokensService } from './users/personal-tokens.service';
import { UsersService } from './users/users.service';
import { SamlRepository } from './saml/saml.repository';
import { SamlService } from './saml/saml.service';
import { systemTxtResolver, type TxtResolver } from './saml/domain-resolver';
import { SamlDomainsRepository } from './saml/saml-domains.repository';
import { SamlDomainsService } from './saml/saml-domains.service';
import { EmailVerificationService } from './users/email-verification.service';
import { AccountsOutbox } from './outbox/accounts-outbox';

/**
 * Root module of the accounts service. Bootstrap-agnostic: the composition root hands it a
 * DataSource (schema `accounts`) and options; the message bus comes from the global MessagingModule.
 */
@Module({})
export class AccountsModule {
  /** `domainResolver`: tests point domain verification at their own DNS server; by default node's resolver (DNS_SERVERS or the system's). */
  static forRoot(options: AccountsOptions & { dataSource: DataSource; domainResolver?: TxtResolver }): DynamicModule {
    const { dataSource, domainResolver, ...rest } = options;
    return {
      module: AccountsModule,
      providers: [
        { provide: ACCOUNTS_DATA_SOURCE, useValue: dataSource },
        { provide: ACCOUNTS_OPTIONS, useValue: rest },
        { provide: DOMAIN_RESOLVER, useValue: domainResolver ?? systemTxtResolver(rest.dnsServers) },
        AccountsOutbox,
        UsersRepository,
        KbsRepository,
        ServiceAccountsRepository,
        SamlRepository,
        SamlService,
        SamlDomainsRepository,
        SamlDomainsService,
        EmailVerificationService,
        AccessService,
        KbsService,
        CallerKbsService,
        ServiceAccountsService,
        UsersService,
        PersonalTokensService,
        AccountsService,
        AccountUsersService,
        AccountQuotaService,
        InvitesService,
        KbUsersService,
        NuaClientsService,
        ModelConfigService,
        BootstrapService,
        AccountsHandlers,
      ],
      exports: [BootstrapService, UsersService],
    };
  }
}
