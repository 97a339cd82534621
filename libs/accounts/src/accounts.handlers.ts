import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AccountsSubjects, ReportingSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { AccessService } from './access/access.service';
import { AccountQuotaService } from './accounts/account-quota.service';
import { AccountUsersService } from './accounts/account-users.service';
import { AccountsService } from './accounts/accounts.service';
import { InvitesService } from './invites/invites.service';
import { KbUsersService } from './kbs/kb-users.service';
import { ModelConfigService } from './kbs/model-config.service';
import { NuaClientsService } from './nua-clients/nua-clients.service';
import { KbsService } from './kbs/kbs.service';
import { CallerKbsService } from './kbs/caller-kbs.service';
import { ServiceAccountsService } from './service-accounts/service-accounts.service';
import { PersonalTokensService } from './users/personal-tokens.service';
import { UsersService } from './users/users.service';
import { SamlService } from './saml/saml.service';
import { SamlDomainsService } from './saml/saml-domains.service';
import { EmailVerificationService } from './users/email-verification.service';

/** Thin bus adapters: a validated payload in (the bus validates against the subject's class), one service call out. */
@Injectable()
export class AccountsHandlers implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly access: AccessService,
    private readonly kbs: KbsService,
    private readonly callerKbs: CallerKbsService,
    private readonly serviceAccounts: ServiceAccountsService,
    private readonly users: UsersService,
    private readonly personalTokens: PersonalTokensService,
    private readonly accounts: AccountsService,
    private readonly accountUsers: AccountUsersService,
    private readonly kbUsers: KbUsersService,
    private readonly invites: InvitesService,
    private readonly nuaClients: NuaClientsService,
    private readonly modelConfig: ModelConfigService,
    private readonly saml: SamlService,
    private readonly samlDomains: SamlDomainsService,
    private readonly emailVerification: EmailVerificationService,
    private readonly quota: AccountQuotaService,
  ) {}

  async onModuleInit(): Promise<void> {
    const S = AccountsSubjects;
    await Promise.all([
      this.bus.handle(S.checkAccess, (req) => this.access.check(req)),
      this.bus.handle(S.createKb, (req) => this.kbs.create(req)),
      this.bus.handle(S.getKb, (req) => this.kbs.get(req)),
      this.bus.handle(S.listKbs, (req) => this.kbs.list(req)),
      this.bus.handle(S.listZones, (req) => this.kbs.zones(req)),
      this.bus.handle(S.modifyKb, (req) => this.kbs.modify(req)),
      this.bus.handle(S.kbUploadLimits, (req) => this.kbs.uploadLimits(req.kb_id)),
      this.bus.handle(S.accountUploadLimits, (req) => this.kbs.accountUploadLimits(req.account_id)),
      this.bus.handle(S.kbCors, (req) => this.kbs.cors(req.kb_id)),
      this.bus.handle(S.deleteKb, (req) => this.kbs.delete(req)),
      this.bus.handle(S.createKbForCaller, (req) => this.callerKbs.create(req)),
      this.bus.handle(S.listCallerKbs, (req) => this.callerKbs.list(req)),
      this.bus.handle(S.getKbBySlug, (req) => this.callerKbs.getBySlug(req)),
      this.bus.handle(S.listServiceAccounts, (req) => this.serviceAccounts.list(req)),
      this.bus.handle(S.createServiceAccount, (req) => this.serviceAccounts.create(req)),
      this.bus.handle(S.deleteServiceAccount, (req) => this.serviceAccounts.delete(req)),
      this.bus.handle(S.createServiceAccountKey, (req) => this.serviceAccounts.createKey(req)),
      this.bus.handle(S.deleteServiceAccountKey, (req) => this.serviceAccounts.deleteKey(req)),
      this.bus.handle(S.createTemporalKey, (req) => this.access.createTemporalKey(req)),
      this.bus.handle(S.createEphemeralToken, (req) => this.access.createEphemeralToken(req)),
      this.bus.handle(S.signUp, (req) => this.users.signUp(req)),
      this.bus.handle(S.signIn, (req) => this.users.signIn(req)),
      this.bus.handle(S.getUser, (req) => this.users.profile(req)),
      this.bus.handle(S.modifyUser, (req) => this.users.modify(req)),
      this.bus.handle(S.deleteUser, (req) => this.users.delete(req)),
      this.bus.handle(S.createPersonalToken, (req) => this.personalTokens.create(req)),
      this.bus.handle(S.listPersonalTokens, (req) => this.personalTokens.list(req)),
      this.bus.handle(S.deletePersonalToken, (req) => this.personalTokens.delete(req)),
      this.bus.handle(S.createAccount, (req) => this.accounts.create(req)),
      this.bus.handle(S.listAccounts, (req) => this.accounts.list(req)),
      this.bus.handle(S.getAccount, (req) => this.accounts.get(req)),
      this.bus.handle(S.modifyAccount, (req) => this.accounts.modify(req)),
      this.bus.handle(S.deleteAccount, (req) => this.accounts.delete(req)),
      this.bus.handle(S.listAccountUsers, (req) => this.accountUsers.list(req)),
      this.bus.handle(S.searchAccountUsers, (req) => this.accountUsers.search(req)),
      this.bus.handle(S.updateAccountUsers, (req) => this.accountUsers.update(req)),
      this.bus.handle(S.inviteToAccount, async (req) => {
        const account = await this.accounts.require(req.account);
        return this.invites.invite(
          { accountId: account.id, label: `the account "${account.title || account.slug}"` },
          req.body.email,
          req.body.role,
          req.user_id,
        );
      }),
      this.bus.handle(S.listAccountInvites, async (req) => this.invites.pending((await this.accounts.require(req.account)).id)),
      this.bus.handle(S.deleteAccountInvite, async (req) => {
        await this.invites.revoke((await this.accounts.require(req.account)).id, req.email);
        return null;
      }),
      this.bus.handle(S.listKbUsers, (req) => this.kbUsers.list(req)),
      this.bus.handle(S.updateKbUsers, (req) => this.kbUsers.update(req)),
      this.bus.handle(S.inviteToKb, (req) => this.kbUsers.invite(req)),
      this.bus.handle(S.listKbInvites, (req) => this.kbUsers.listInvites(req)),
      this.bus.handle(S.deleteKbInvite, (req) => this.kbUsers.deleteInvite(req)),
      this.bus.handle(S.createNuaClient, (req) => this.nuaClients.create(req)),
      this.bus.handle(S.listNuaClients, (req) => this.nuaClients.list(req)),
      this.bus.handle(S.getNuaClient, (req) => this.nuaClients.get(req)),
      this.bus.handle(S.modifyNuaClient, (req) => this.nuaClients.modify(req)),
      this.bus.handle(S.deleteNuaClient, (req) => this.nuaClients.delete(req)),
      this.bus.handle(S.renewNuaClientKey, (req) => this.nuaClients.renewKey(req)),
      this.bus.handle(S.nuaClientWebhookSecret, (req) => this.nuaClients.webhookSecret(req)),
      this.bus.handle(S.resolveNuaClientWebhook, (req) => this.nuaClients.webhook(req)),
      this.bus.handle(S.learningSchema, async () => this.modelConfig.schema()),
      this.bus.handle(S.getKbConfig, (req) => this.modelConfig.get(req)),
      this.bus.handle(S.resolveKbConfig, (req) => this.modelConfig.resolve(req)),
      this.bus.handle(S.setKbConfig, (req) => this.modelConfig.set(req)),
      this.bus.handle(S.listVectorsets, (req) => this.modelConfig.vectorsets(req)),
      this.bus.handle(S.addSemanticModel, (req) => this.modelConfig.addSemanticModel(req)),
      this.bus.handle(S.removeSemanticModel, (req) => this.modelConfig.removeSemanticModel(req)),
      this.bus.handle(S.discoverSso, (req) => this.saml.discover(req)),
      this.bus.handle(S.samlMetadata, (req) => this.saml.metadata(req)),
      this.bus.handle(S.samlLogin, (req) => this.saml.login(req)),
      this.bus.handle(S.samlAcs, (req) => this.saml.acs(req)),
      this.bus.handle(S.samlLink, (req) => this.saml.link(req)),
      this.bus.handle(S.listSamlDomains, (req) => this.samlDomains.list(req)),
      this.bus.handle(S.claimSamlDomain, (req) => this.samlDomains.claim(req)),
      this.bus.handle(S.verifySamlDomain, (req) => this.samlDomains.verify(req)),
      this.bus.handle(S.sendEmailVerification, (req) => this.emailVerification.send(req)),
      this.bus.handle(S.verifyEmail, (req) => this.emailVerification.verify(req)),
      this.bus.handle(S.acceptInvite, (req) => this.invites.accept(req.token, req.user_id)),
      this.bus.handle(S.kbAccount, (req) => this.quota.kbAccount(req.kb_id)),
      this.bus.handle(S.accountQuota, (req) => this.quota.quota(req.account_id)),
      this.bus.handle(S.setAccountLimits, (req) => this.quota.setLimits(req)),
      this.bus.subscribe(ReportingSubjects.blockingChanged, (e) => this.quota.applyBlocking(e), { durable: 'accounts-blocking' }),
    ]);
  }
}
