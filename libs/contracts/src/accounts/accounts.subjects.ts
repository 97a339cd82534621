import { event, rpc } from '../common/bus';
import type { WebhookSecretDto } from '../understanding/webhook.dto';
import type { AccessGrant } from '../common/principal';
import { AccessChangedEvent, CheckAccessRequest, CredentialRevokedEvent } from './access.dto';
import {
  CreatePersonalTokenRequest,
  ModifyUserRequest,
  PersonalTokenRef,
  SignInRequest,
  SignUpRequest,
  UserRef,
  VerifyEmailRequest,
  type EmailVerificationDto,
  type EmailVerifiedDto,
  type PersonalTokenCreatedDto,
  type PersonalTokenDto,
  type SignedUpDto,
  type UserProfileDto,
  type UserTokenDto,
} from './user.dto';
import {
  AccountCallerRef,
  AccountDeletedEvent,
  CreateAccountRequest,
  InviteToAccountRequest,
  ModifyAccountRequest,
  SearchAccountUsersRequest,
  UpdateAccountUsersRequest,
  type AccountDto,
  type AccountSummaryDto,
  type AccountUserDto,
  type InviteCreatedDto,
} from './account.dto';
import {
  AcceptInviteRequest,
  DeleteAccountInviteRequest,
  DeleteKbInviteRequest,
  InviteToKbRequest,
  ListKbUsersRequest,
  UpdateKbUsersRequest,
  type InviteAcceptedDto,
  type InvitedUserDto,
  type KbUserDto,
} from './kb-users.dto';
import {
  CreateNuaClientRequest,
  ListNuaClientsRequest,
  ModifyNuaClientRequest,
  NuaClientRef,
  type NuaClientDto,
  type NuaClientKeyDto,
  type NuaClientListDto,
  type NuaClientWebhookDto,
} from './nua-client.dto';
import type { LearningConfigurationSchemaDto, ModelConfigurationDto } from './model-config-responses.dto';
import { CreateTemporalKeyRequest, type TemporalKeyDto } from './temporal-key.dto';
import { CreateEphemeralTokenRequest, type EphemeralTokenDto } from './ephemeral-token.dto';
import { ListZonesRequest, type ZoneDto } from './zone.dto';
import {
  ClaimSamlDomainRequest,
  SamlAccountRef,
  SamlAcsRequest,
  SamlDomainsRef,
  SamlLinkRequest,
  SamlLoginRequest,
  SsoDiscoverRequest,
  VerifySamlDomainRequest,
  type SamlDomainDto,
  type SamlLoginDto,
  type SamlMetadataDto,
  type SsoDiscoveryDto,
} from './saml.dto';
import {
  AccountLimitsChangedEvent,
  AccountQuotaRequest,
  KbAccountRequest,
  SetAccountLimitsRequest,
  type AccountQuotaDto,
  type EffectiveLimits,
} from './account-limits.dto';
import { AccountUploadLimitsRequest, KbCorsRequest, type KbCorsDto, type KbUploadLimitsDto } from './kb.dto';
import {
  KbConfigRef,
  LearningSchemaRequest,
  SemanticModelChangeRequest,
  SemanticModelsChangedEvent,
  SetKbConfigRequest,
  type KbVectorsetsDto,
} from './model-config.dto';
import {
  CreateKbRequest,
  GetKbRequest,
  KbEvent,
  KbRef,
  ListKbsRequest,
  ModifyKbRequest,
  type IdDto,
  type KnowledgeBoxDto,
  type KnowledgeBoxSummaryDto,
} from './kb.dto';
import { CreateKbForCallerRequest, KbBySlugRequest, KbCaller, type KbIdentityDto, type StandaloneKbListDto } from './kb-standalone.dto';
import {
  CreateServiceAccountKeyRequest,
  CreateServiceAccountRequest,
  ServiceAccountKeyRef,
  ServiceAccountRef,
  type ServiceAccountDto,
  type ServiceAccountKeyCreatedDto,
} from './service-account.dto';

export const AccountsSubjects = {
  checkAccess: rpc<CheckAccessRequest, AccessGrant>('accounts.access.check', CheckAccessRequest),

  createKb: rpc<CreateKbRequest, IdDto>('accounts.kb.create', CreateKbRequest),
  getKb: rpc<GetKbRequest, KnowledgeBoxDto>('accounts.kb.get', GetKbRequest),
  listKbs: rpc<ListKbsRequest, KnowledgeBoxSummaryDto[]>('accounts.kb.list', ListKbsRequest),
  modifyKb: rpc<ModifyKbRequest, Record<string, never>>('accounts.kb.modify', ModifyKbRequest),
  kbUploadLimits: rpc<KbCorsRequest, KbUploadLimitsDto>('accounts.kb.upload-limits', KbCorsRequest),
  /** Upload limits of an account (uploads to the understanding API belong to no KB yet). */
  accountUploadLimits: rpc<AccountUploadLimitsRequest, KbUploadLimitsDto>('accounts.account.upload-limits', AccountUploadLimitsRequest),
  kbCors: rpc<KbCorsRequest, KbCorsDto>('accounts.kb.cors', KbCorsRequest),
  deleteKb: rpc<KbRef, Record<string, never>>('accounts.kb.delete', KbRef),
  /** The standalone KB routes: the KBs a caller (a user, or an API key's one KB) can see, across accounts. */
  createKbForCaller: rpc<CreateKbForCallerRequest, KbIdentityDto>('accounts.kb.create-for-caller', CreateKbForCallerRequest),
  listCallerKbs: rpc<KbCaller, StandaloneKbListDto>('accounts.kb.list-for-caller', KbCaller),
  getKbBySlug: rpc<KbBySlugRequest, KnowledgeBoxDto>('accounts.kb.get-by-slug', KbBySlugRequest),
  /** The zones of the deployment (the configured one and any a KB lives in), or those of one account. */
  listZones: rpc<ListZonesRequest, ZoneDto[]>('accounts.zone.list', ListZonesRequest),

  listServiceAccounts: rpc<KbRef, ServiceAccountDto[]>('accounts.service-account.list', KbRef),
  createServiceAccount: rpc<CreateServiceAccountRequest, IdDto>('accounts.service-account.create', CreateServiceAccountRequest),
  deleteServiceAccount: rpc<ServiceAccountRef, Record<string, never>>('accounts.service-account.delete', ServiceAccountRef),
  createServiceAccountKey: rpc<CreateServiceAccountKeyRequest, ServiceAccountKeyCreatedDto>(
    'accounts.service-account-key.create',
    CreateServiceAccountKeyRequest,
  ),
  deleteServiceAccountKey: rpc<ServiceAccountKeyRef, Record<string, never>>('accounts.service-account-key.delete', ServiceAccountKeyRef),

  createTemporalKey: rpc<CreateTemporalKeyRequest, TemporalKeyDto>('accounts.temporal-key.create', CreateTemporalKeyRequest),
  /** A signed, read-only token for one KB's download routes (`eph-token` query parameter). */
  createEphemeralToken: rpc<CreateEphemeralTokenRequest, EphemeralTokenDto>('accounts.ephemeral-token.create', CreateEphemeralTokenRequest),
  signUp: rpc<SignUpRequest, SignedUpDto>('accounts.user.sign-up', SignUpRequest),
  signIn: rpc<SignInRequest, UserTokenDto>('accounts.user.sign-in', SignInRequest),
  getUser: rpc<UserRef, UserProfileDto>('accounts.user.get', UserRef),
  modifyUser: rpc<ModifyUserRequest, null>('accounts.user.modify', ModifyUserRequest),
  deleteUser: rpc<UserRef, null>('accounts.user.delete', UserRef),
  /** Sends (or, without SMTP, returns) a new link proving the user reads their address. */
  sendEmailVerification: rpc<UserRef, EmailVerificationDto>('accounts.user-email.send-verification', UserRef),
  /** Consumes a verification link: the address it was sent to is verified if it is still the user's. */
  verifyEmail: rpc<VerifyEmailRequest, EmailVerifiedDto>('accounts.user-email.verify', VerifyEmailRequest),
  createPersonalToken: rpc<CreatePersonalTokenRequest, PersonalTokenCreatedDto>(
    'accounts.personal-token.create',
    CreatePersonalTokenRequest,
  ),
  listPersonalTokens: rpc<UserRef, PersonalTokenDto[]>('accounts.personal-token.list', UserRef),
  deletePersonalToken: rpc<PersonalTokenRef, null>('accounts.personal-token.delete', PersonalTokenRef),

  createAccount: rpc<CreateAccountRequest, IdDto>('accounts.account.create', CreateAccountRequest),
  listAccounts: rpc<UserRef, AccountSummaryDto[]>('accounts.account.list', UserRef),
  getAccount: rpc<AccountCallerRef, AccountDto>('accounts.account.get', AccountCallerRef),
  modifyAccount: rpc<ModifyAccountRequest, null>('accounts.account.modify', ModifyAccountRequest),
  deleteAccount: rpc<AccountCallerRef, null>('accounts.account.delete', AccountCallerRef),
  listAccountUsers: rpc<AccountCallerRef, AccountUserDto[]>('accounts.account-user.list', AccountCallerRef),
  searchAccountUsers: rpc<SearchAccountUsersRequest, AccountUserDto[]>('accounts.account-user.search', SearchAccountUsersRequest),
  updateAccountUsers: rpc<UpdateAccountUsersRequest, null>('accounts.account-user.update', UpdateAccountUsersRequest),
  inviteToAccount: rpc<InviteToAccountRequest, InviteCreatedDto>('accounts.account-invite.create', InviteToAccountRequest),

  listAccountInvites: rpc<AccountCallerRef, InvitedUserDto[]>('accounts.account-invite.list', AccountCallerRef),
  deleteAccountInvite: rpc<DeleteAccountInviteRequest, null>('accounts.account-invite.delete', DeleteAccountInviteRequest),
  listKbUsers: rpc<ListKbUsersRequest, KbUserDto[]>('accounts.kb-user.list', ListKbUsersRequest),
  updateKbUsers: rpc<UpdateKbUsersRequest, null>('accounts.kb-user.update', UpdateKbUsersRequest),
  inviteToKb: rpc<InviteToKbRequest, InviteCreatedDto>('accounts.kb-invite.create', InviteToKbRequest),
  listKbInvites: rpc<KbRef, InvitedUserDto[]>('accounts.kb-invite.list', KbRef),
  deleteKbInvite: rpc<DeleteKbInviteRequest, null>('accounts.kb-invite.delete', DeleteKbInviteRequest),
  acceptInvite: rpc<AcceptInviteRequest, InviteAcceptedDto>('accounts.invite.accept', AcceptInviteRequest),

  createNuaClient: rpc<CreateNuaClientRequest, NuaClientKeyDto>('accounts.nua-client.create', CreateNuaClientRequest),
  listNuaClients: rpc<ListNuaClientsRequest, NuaClientListDto>('accounts.nua-client.list', ListNuaClientsRequest),
  getNuaClient: rpc<NuaClientRef, NuaClientDto>('accounts.nua-client.get', NuaClientRef),
  modifyNuaClient: rpc<ModifyNuaClientRequest, null>('accounts.nua-client.modify', ModifyNuaClientRequest),
  deleteNuaClient: rpc<NuaClientRef, null>('accounts.nua-client.delete', NuaClientRef),
  renewNuaClientKey: rpc<NuaClientRef, NuaClientKeyDto>('accounts.nua-client.renew-key', NuaClientRef),
  /** The secret that signs the client's processing webhooks (docs/webhooks.md). */
  nuaClientWebhookSecret: rpc<NuaClientRef, WebhookSecretDto>('accounts.nua-client.webhook-secret', NuaClientRef),
  /** Internal only (no gateway route): the client's processing webhook with its headers in clear, for a push to call. */
  resolveNuaClientWebhook: rpc<NuaClientRef, NuaClientWebhookDto>('accounts.nua-client.webhook', NuaClientRef),

  learningSchema: rpc<LearningSchemaRequest, LearningConfigurationSchemaDto>('accounts.learning-schema.get', LearningSchemaRequest),
  getKbConfig: rpc<KbConfigRef, ModelConfigurationDto>('accounts.kb-config.get', KbConfigRef),
  /** Internal only (no gateway route): the configuration with `user_keys` in clear, for the services calling providers. */
  resolveKbConfig: rpc<KbConfigRef, Record<string, unknown>>('accounts.kb-config.resolve', KbConfigRef),
  setKbConfig: rpc<SetKbConfigRequest, ModelConfigurationDto>('accounts.kb-config.set', SetKbConfigRequest),
  listVectorsets: rpc<KbConfigRef, KbVectorsetsDto>('accounts.kb.vectorsets', KbConfigRef),
  addSemanticModel: rpc<SemanticModelChangeRequest, KbVectorsetsDto>('accounts.semantic-model.add', SemanticModelChangeRequest),
  removeSemanticModel: rpc<SemanticModelChangeRequest, KbVectorsetsDto>('accounts.semantic-model.remove', SemanticModelChangeRequest),

  discoverSso: rpc<SsoDiscoverRequest, SsoDiscoveryDto>('accounts.sso.discover', SsoDiscoverRequest),
  samlMetadata: rpc<SamlAccountRef, SamlMetadataDto>('accounts.saml.metadata', SamlAccountRef),
  samlLogin: rpc<SamlLoginRequest, SamlLoginDto>('accounts.saml.login', SamlLoginRequest),
  samlAcs: rpc<SamlAcsRequest, UserTokenDto>('accounts.saml.acs', SamlAcsRequest),
  /** A signed-in user starts single sign-on whose answer attaches the IdP identity to them. */
  samlLink: rpc<SamlLinkRequest, SamlLoginDto>('accounts.saml.link', SamlLinkRequest),
  listSamlDomains: rpc<SamlDomainsRef, SamlDomainDto[]>('accounts.saml-domain.list', SamlDomainsRef),
  claimSamlDomain: rpc<ClaimSamlDomainRequest, SamlDomainDto>('accounts.saml-domain.claim', ClaimSamlDomainRequest),
  verifySamlDomain: rpc<VerifySamlDomainRequest, SamlDomainDto>('accounts.saml-domain.verify', VerifySamlDomainRequest),

  /** The account of a KB (reporting meters usage per account); null when the KB is unknown. */
  kbAccount: rpc<KbAccountRequest, { account_id: string | null }>('accounts.kb.account', KbAccountRequest),
  /** An account's effective limits (reporting decides blocks with them). */
  accountQuota: rpc<AccountQuotaRequest, AccountQuotaDto>('accounts.account.quota', AccountQuotaRequest),
  /** Operators (ROOT users) set an account's limits. */
  setAccountLimits: rpc<SetAccountLimitsRequest, EffectiveLimits>('accounts.account-limits.set', SetAccountLimitsRequest),
  accountLimitsChanged: event<AccountLimitsChangedEvent>('accounts.account-limits.changed', 'NOTIFICATIONS', AccountLimitsChangedEvent),

  kbCreated: event<KbEvent>('accounts.kb.created', 'NOTIFICATIONS', KbEvent),
  kbDeleted: event<KbEvent>('accounts.kb.deleted', 'NOTIFICATIONS', KbEvent),
  accountDeleted: event<AccountDeletedEvent>('accounts.account.deleted', 'NOTIFICATIONS', AccountDeletedEvent),
  semanticModelsChanged: event<SemanticModelsChangedEvent>(
    'accounts.kb.semantic-models-changed',
    'NOTIFICATIONS',
    SemanticModelsChangedEvent,
  ),
  credentialRevoked: event<CredentialRevokedEvent>('accounts.credential.revoked', 'NOTIFICATIONS', CredentialRevokedEvent),
  accessChanged: event<AccessChangedEvent>('accounts.access.changed', 'NOTIFICATIONS', AccessChangedEvent),
} as const;
