import type { AccountRole, CredentialKind, RouteRole } from '@kb/contracts';

/**
 * THE access table: every route of the gateway and what it requires. A route missing here is
 * refused (fail closed), and a test checks every registered route has an entry.
 */
export type AccessRule =
  | { scope: 'public' }
  /** Any signed-in user (user token or personal access token). */
  | { scope: 'user' }
  /** A permanent API key (not a temporal one): for minting temporal keys. */
  | { scope: 'api-key' }
  /**
   * An understanding-API client key (X-SVC-UAKEY): the processing of its account's KBs. With
   * `kbParam`, the route names one KB, which must be of the key's account (else 404, as unknown).
   */
  | { scope: 'ua-key'; kbParam?: string }
  /** A role on the KB named by `kbParam`; `accountParam`, when given, must be that KB's account. */
  | { scope: 'kb'; role: RouteRole; kbParam: string; accountParam?: string; credentials: readonly CredentialKind[]; groupScoped?: boolean }
  /**
   * Any caller holding one of `credentials`, with no KB or account in the path: the service answers
   * only with what that caller can see (the standalone KB routes: a user's KBs, a key's one KB).
   */
  | { scope: 'caller'; credentials: readonly CredentialKind[] }
  /** A role on the account named by `accountParam` (id or slug). */
  | { scope: 'account'; role: AccountRole; accountParam: string; credentials: readonly CredentialKind[] };

export const USERS: readonly CredentialKind[] = ['user_token', 'pat'];
/** Callers of KB content routes: users, and API keys (temporal keys act as their parent key). */
export const KB_CALLERS: readonly CredentialKind[] = ['user_token', 'pat', 'api_key', 'temporal_key'];
/**
 * Download routes: also an ephemeral token (`eph-token` query parameter) of the KB, for links in a
 * web page. These routes are the only ones that accept it; everywhere else it is refused.
 */
export const DOWNLOAD_CALLERS: readonly CredentialKind[] = [...KB_CALLERS, 'ephemeral_token'];

const PUBLIC: AccessRule = { scope: 'public' };
const UA_KB: AccessRule = { scope: 'ua-key', kbParam: 'kbid' };
const USER: AccessRule = { scope: 'user' };
const kb = (role: RouteRole, credentials: readonly CredentialKind[] = KB_CALLERS): AccessRule => ({
  scope: 'kb',
  role,
  kbParam: 'kbid',
  credentials,
});
/** /ask routes: also open to temporal keys with security groups (spec 5), whose groups then replace the body's. */
const ask: AccessRule = { scope: 'kb', role: 'READER', kbParam: 'kbid', credentials: KB_CALLERS, groupScoped: true };
const accountKb = (role: RouteRole, credentials: readonly CredentialKind[] = USERS): AccessRule => ({
  scope: 'kb',
  role,
  kbParam: 'kb_id',
  accountParam: 'account_id',
  credentials,
});
const account = (role: AccountRole): AccessRule => ({ scope: 'account', role, accountParam: 'account_id', credentials: USERS });

/** TUS server information is public (it says nothing about any KB); the rest needs WRITER. */
const TUS_ROUTES = (base: string): Record<string, AccessRule> => ({
  [`OPTIONS /api/v1/kb/:kbid/${base}tusupload`]: PUBLIC,
  [`OPTIONS /api/v1/kb/:kbid/${base}tusupload/:upload_id`]: PUBLIC,
  [`POST /api/v1/kb/:kbid/${base}tusupload`]: kb('WRITER'),
  [`HEAD /api/v1/kb/:kbid/${base}tusupload/:upload_id`]: kb('WRITER'),
  [`PATCH /api/v1/kb/:kbid/${base}tusupload/:upload_id`]: kb('WRITER'),
});

const RESOURCE_ROUTES = (by: string): Record<string, AccessRule> => ({
  [`GET /api/v1/kb/:kbid/${by}`]: kb('READER'),
  [`HEAD /api/v1/kb/:kbid/${by}`]: kb('READER'),
  [`PATCH /api/v1/kb/:kbid/${by}`]: kb('WRITER'),
  [`DELETE /api/v1/kb/:kbid/${by}`]: kb('WRITER'),
  [`POST /api/v1/kb/:kbid/${by}/reprocess`]: kb('WRITER'),
  [`POST /api/v1/kb/:kbid/${by}/reindex`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/text/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/link/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/file/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/conversation/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/key_value/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/keywordset/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/datetime/:field_id`]: kb('WRITER'),
  [`PUT /api/v1/kb/:kbid/${by}/conversation/:field_id/messages`]: kb('WRITER'),
  [`DELETE /api/v1/kb/:kbid/${by}/conversation/:field_id/messages/:message_ident`]: kb('WRITER'),
  [`GET /api/v1/kb/:kbid/${by}/:field_type/:field_id`]: kb('READER'),
  [`DELETE /api/v1/kb/:kbid/${by}/:field_type/:field_id`]: kb('WRITER'),
  [`POST /api/v1/kb/:kbid/${by}/:field_type/:field_id/reprocess`]: kb('WRITER'),
  [`GET /api/v1/kb/:kbid/${by}/file/:field_id/download/field`]: kb('READER', DOWNLOAD_CALLERS),
  [`GET /api/v1/kb/:kbid/${by}/:field_type/:field_id/download/extracted/*download_field`]: kb('READER', DOWNLOAD_CALLERS),
});

export const ACCESS_TABLE: Readonly<Record<string, AccessRule>> = {
  // Signed links of the fs blob driver (activity downloads): the signature is the credential.
  'GET /api/v1/blobs/*key': PUBLIC,
  'GET /health/live': PUBLIC,
  'GET /health/ready': PUBLIC,
  'GET /metrics': PUBLIC,

  // Sign-in page ({auth_url}) and JSON sign-up/sign-in
  'GET /auth': PUBLIC,
  'POST /auth': PUBLIC,
  'POST /auth/signup-form': PUBLIC,
  'POST /auth/login': PUBLIC,
  'POST /auth/signup': PUBLIC,
  'GET /auth/invite': PUBLIC,
  'POST /auth/invite/login': PUBLIC,
  'POST /auth/invite/signup': PUBLIC,
  // The mailed e-mail verification link: the signed token in it is the credential
  'GET /auth/verify-email': PUBLIC,
  'POST /api/v1/auth/signup': PUBLIC,
  'POST /api/v1/auth/login': PUBLIC,
  // SAML service provider per account: the IdP and the browser call these without a credential
  'GET /api/v1/saml/:account_id/metadata': PUBLIC,
  'GET /api/v1/saml/:account_id/login': PUBLIC,
  'POST /api/v1/saml/:account_id/acs': PUBLIC,
  // Link intent: the AuthnRequest is bound to the signed-in user who starts it
  'POST /api/v1/saml/:account_id/link': USER,

  // The signed-in user (global host)
  'GET /api/v1/user': USER,
  'PATCH /api/v1/user': USER,
  'DELETE /api/v1/user': USER,
  'POST /api/v1/user/verify_email': USER,
  'POST /api/v1/user/pa_tokens': USER,
  'GET /api/v1/user/pa_tokens': USER,
  'DELETE /api/v1/user/pa_token/:token_id': USER,
  'GET /api/v1/user/welcome': USER,
  // The zones of the deployment are no secret: every caller that may reach a KB may list them.
  'GET /api/v1/zones': { scope: 'caller', credentials: KB_CALLERS },

  // Accounts (global host); :account_id is an id or a slug
  'POST /api/v1/accounts': USER,
  'GET /api/v1/accounts': USER,
  'GET /api/v1/account/:account_id': account('AMEMBER'),
  'PATCH /api/v1/account/:account_id': account('AOWNER'),
  'DELETE /api/v1/account/:account_id': account('AOWNER'),
  'GET /api/v1/account/:account_id/users': account('AMEMBER'),
  'GET /api/v1/account/:account_id/users/search': account('AMEMBER'),
  'PATCH /api/v1/account/:account_id/users': account('AOWNER'),
  'POST /api/v1/account/:account_id/invite': account('AOWNER'),
  'GET /api/v1/account/:account_id/invites': account('AOWNER'),
  'DELETE /api/v1/account/:account_id/invite/:email': account('AOWNER'),
  'GET /api/v1/account/:account_id/user/:user_id': account('AMEMBER'),
  // What the reference clients read in account screens: the caller's role, the account's zones and status, where its KBs live
  'GET /api/v1/account/:account_id/permissions': account('AMEMBER'),
  'GET /api/v1/account/:account_id/zones': account('AMEMBER'),
  'GET /api/v1/account/:account_id/status': account('AMEMBER'),
  'GET /api/v1/account/:account_id/index/kbs': account('AMEMBER'),
  // Usage (issue 19): the account's owners; limits are set by operators (ROOT users, checked by accounts).
  'GET /api/v1/account/:account_id/usage': account('AOWNER'),
  'PUT /api/v1/account/:account_id/limits': USER,
  // SSO domain claims and their DNS proof
  'GET /api/v1/account/:account_id/saml/domains': account('AOWNER'),
  'POST /api/v1/account/:account_id/saml/domains': account('AOWNER'),
  'POST /api/v1/account/:account_id/saml/domains/:domain/verify': account('AOWNER'),
  'POST /api/v1/invites/accept': USER,

  // Understanding-API clients (UA keys), zone host
  'POST /api/v1/account/:account_id/nua_clients': account('AOWNER'),
  'GET /api/v1/account/:account_id/nua_clients': account('AOWNER'),
  'GET /api/v1/account/:account_id/nua_client/:client_id': account('AOWNER'),
  'PATCH /api/v1/account/:account_id/nua_client/:client_id': account('AOWNER'),
  'DELETE /api/v1/account/:account_id/nua_client/:client_id': account('AOWNER'),
  'PUT /api/v1/account/:account_id/nua_client/:client_id/key': account('AOWNER'),

  // Knowledge Box users and invitations
  'GET /api/v1/account/:account_id/kb/:kb_id/users': accountKb('MANAGER'),
  'PATCH /api/v1/account/:account_id/kb/:kb_id/users': accountKb('MANAGER'),
  'POST /api/v1/account/:account_id/kb/:kb_id/invite': accountKb('MANAGER'),
  'GET /api/v1/account/:account_id/kb/:kb_id/invites': accountKb('MANAGER'),
  'DELETE /api/v1/account/:account_id/kb/:kb_id/invite': accountKb('MANAGER'),

  // Knowledge Boxes (zone host, account layer)
  'POST /api/v1/account/:account_id/kbs': account('AOWNER'),
  // Account backups: a backup holds a whole KB and a restore creates one, so owners only
  'GET /api/v1/account/:account_id/backups': account('AOWNER'),
  'POST /api/v1/account/:account_id/backups': account('AOWNER'),
  'DELETE /api/v1/account/:account_id/backup/:backup_id': account('AOWNER'),
  'POST /api/v1/account/:account_id/backup/:backup_id/restore': account('AOWNER'),
  'GET /api/v1/account/:account_id/kbs': account('AMEMBER'),
  // The reference JS client reads its KB record with the KB's own API key.
  'GET /api/v1/account/:account_id/kb/:kb_id': accountKb('READER', [...USERS, 'api_key']),
  'GET /api/v1/account/:account_id/kb/:kb_id/permissions': accountKb('READER', [...USERS, 'api_key']),
  'PATCH /api/v1/account/:account_id/kb/:kb_id': accountKb('MANAGER'),
  'DELETE /api/v1/account/:account_id/kb/:kb_id': accountKb('MANAGER'),

  // Knowledge Boxes, standalone paths (the reference's database SDK and admin app): no account in the
  // path; a user acts in their accounts, an API key on its one KB. Other tenants' KBs are "not found".
  'POST /api/v1/kbs': USER,
  'GET /api/v1/kbs': { scope: 'caller', credentials: KB_CALLERS },
  'GET /api/v1/kb/s/:slug': { scope: 'caller', credentials: KB_CALLERS },
  'GET /api/v1/kb/:kbid': kb('READER'),
  'PATCH /api/v1/kb/:kbid': kb('MANAGER'),
  'DELETE /api/v1/kb/:kbid': kb('MANAGER', USERS),
  'GET /api/v1/kb/:kbid/counters': kb('READER'),
  // Export and import (API-MAP 3): an archive holds everything in the KB and an import writes all of it
  'POST /api/v1/kb/:kbid/export': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/export/:export_id/status': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/export/:export_id': kb('MANAGER'),
  'POST /api/v1/kb/:kbid/import': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/import/:import_id/status': kb('MANAGER'),
  // A new KB from an archive: like POST /api/v1/kbs, an account owner's
  'POST /api/v1/kbs/import': USER,
  // Live notifications (resource written, processed, indexed): what any reader of the KB may see
  'GET /api/v1/kb/:kbid/notifications': kb('READER'),
  // Browser tokens for the download routes (eph-token): by a reader of the KB, or the KB's API key
  'POST /api/v1/account/:account_id/kb/:kb_id/ephemeral_tokens': accountKb('READER', [...USERS, 'api_key']),
  'POST /api/v1/ephemeral_token': { scope: 'api-key' },

  // Service accounts and API keys
  'POST /api/v1/service_account_temporal_key': { scope: 'api-key' },
  'GET /api/v1/account/:account_id/kb/:kb_id/service_accounts': accountKb('MANAGER'),
  'POST /api/v1/account/:account_id/kb/:kb_id/service_accounts': accountKb('MANAGER'),
  'DELETE /api/v1/account/:account_id/kb/:kb_id/service_account/:sa_id': accountKb('MANAGER'),
  'POST /api/v1/account/:account_id/kb/:kb_id/service_account/:sa_id/keys': accountKb('MANAGER'),
  'DELETE /api/v1/account/:account_id/kb/:kb_id/service_account/:sa_id/key/:sa_key_id': accountKb('MANAGER'),

  // Learning configuration schema and model configuration
  'GET /api/v1/learning/configuration/schema': PUBLIC,
  'GET /api/v1/schema': PUBLIC,
  'GET /api/v1/nua/schema': PUBLIC,
  'GET /api/v1/schema/:kbid': kb('READER'),
  // The understanding API's paths of the model configuration
  'GET /api/v1/config/:kbid': kb('READER'),
  'POST /api/v1/config/:kbid': kb('MANAGER'),
  'PATCH /api/v1/config/:kbid': kb('MANAGER'),
  'POST /api/v1/models/:kbid': kb('MANAGER', USERS),
  'DELETE /api/v1/account/:account_id/models/:kb_id/:model_id': accountKb('MANAGER'),
  'GET /api/v1/account/:account_id/schema': account('AMEMBER'),
  'GET /api/v1/kb/:kbid/schema': kb('READER'),
  'GET /api/v1/kb/:kbid/configuration': kb('READER'),
  'POST /api/v1/kb/:kbid/configuration': kb('MANAGER'),
  'PATCH /api/v1/kb/:kbid/configuration': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/vectorsets': kb('READER'),
  'GET /api/v1/download/:kbid/model/:model_id/:filename': kb('READER'),
  'POST /api/v1/kb/:kbid/vectorsets/:vectorset_id': kb('MANAGER'),
  'DELETE /api/v1/kb/:kbid/vectorsets/:vectorset_id': kb('MANAGER'),
  'POST /api/v1/account/:account_id/models/:kb_id': accountKb('MANAGER'),

  // Resources
  'POST /api/v1/kb/:kbid/resources': kb('WRITER'),
  'POST /api/v1/kb/:kbid/upload': kb('WRITER'),
  'POST /api/v1/kb/:kbid/resource/:rid/file/:field_id/upload': kb('WRITER'),
  'POST /api/v1/kb/:kbid/slug/:rslug/file/:field_id/upload': kb('WRITER'),
  'GET /api/v1/kb/:kbid/resources': kb('READER'),
  'GET /api/v1/kb/:kbid/labelsets': kb('READER'),
  'GET /api/v1/kb/:kbid/custom-synonyms': kb('READER'),
  'PUT /api/v1/kb/:kbid/custom-synonyms': kb('WRITER'),
  'DELETE /api/v1/kb/:kbid/custom-synonyms': kb('WRITER'),
  // Saved configurations (docs/kb-configuration.md): read by readers, written by the KB's managers (API-MAP: owner).
  'GET /api/v1/kb/:kbid/search_configurations': kb('READER'),
  'GET /api/v1/kb/:kbid/search_configurations/:config_name': kb('READER'),
  'POST /api/v1/kb/:kbid/search_configurations/:config_name': kb('MANAGER'),
  'PATCH /api/v1/kb/:kbid/search_configurations/:config_name': kb('MANAGER'),
  'DELETE /api/v1/kb/:kbid/search_configurations/:config_name': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/kv-schemas': kb('READER'),
  'POST /api/v1/kb/:kbid/kv-schemas': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/kv-schemas/:schema_id': kb('READER'),
  'PUT /api/v1/kb/:kbid/kv-schemas/:schema_id': kb('MANAGER'),
  'DELETE /api/v1/kb/:kbid/kv-schemas/:schema_id': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/extract_strategies': kb('READER'),
  'POST /api/v1/kb/:kbid/extract_strategies': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/extract_strategies/strategy/:strategy_id': kb('READER'),
  'DELETE /api/v1/kb/:kbid/extract_strategies/strategy/:strategy_id': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/split_strategies': kb('READER'),
  'POST /api/v1/kb/:kbid/split_strategies': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/split_strategies/strategy/:strategy_id': kb('READER'),
  'DELETE /api/v1/kb/:kbid/split_strategies/strategy/:strategy_id': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/find': kb('READER'),
  'POST /api/v1/kb/:kbid/find': kb('READER'),
  'POST /api/v1/kb/:kbid/retrieve': kb('READER'),
  'POST /api/v1/kb/:kbid/hydrate': kb('READER'),
  'POST /api/v1/kb/:kbid/augment': kb('READER'),
  'GET /api/v1/kb/:kbid/catalog': kb('READER'),
  'GET /api/v1/kb/:kbid/processing-status': kb('READER'),
  'GET /api/v1/processing/requests': { scope: 'ua-key' },
  'GET /api/v1/processing/requests/:processing_id': { scope: 'ua-key' },
  'POST /api/v1/processing/push': { scope: 'ua-key' },
  'POST /api/v1/processing/upload': { scope: 'ua-key' },
  'GET /api/v1/processing/pull': { scope: 'ua-key' },
  'GET /api/v1/processing/requests/:processing_id/webhooks': { scope: 'ua-key' },
  'GET /api/v1/processing/webhook-secret': { scope: 'ua-key' },
  'POST /api/v2/processing/pull': { scope: 'ua-key' },
  'OPTIONS /api/v1/processing/tusupload': PUBLIC,
  'OPTIONS /api/v1/processing/tusupload/:upload_id': PUBLIC,
  'POST /api/v1/processing/tusupload': { scope: 'ua-key' },
  'HEAD /api/v1/processing/tusupload/:upload_id': { scope: 'ua-key' },
  'PATCH /api/v1/processing/tusupload/:upload_id': { scope: 'ua-key' },
  'POST /api/v1/kb/:kbid/catalog': kb('READER'),
  'POST /api/v1/kb/:kbid/catalog/facets': kb('READER'),
  'POST /api/v1/kb/:kbid/graph': kb('READER'),
  'POST /api/v1/kb/:kbid/graph/nodes': kb('READER'),
  'POST /api/v1/kb/:kbid/graph/relations': kb('READER'),
  'GET /api/v1/kb/:kbid/search': kb('READER'),
  'POST /api/v1/kb/:kbid/search': kb('READER'),
  'GET /api/v1/kb/:kbid/resource/:rid/search': kb('READER'),
  'GET /api/v1/kb/:kbid/suggest': kb('READER'),
  'POST /api/v1/kb/:kbid/suggest': kb('READER'),
  'POST /api/v1/kb/:kbid/ask': ask,
  'POST /api/v1/kb/:kbid/resource/:rid/ask': ask,
  'POST /api/v1/kb/:kbid/slug/:rslug/ask': ask,
  'POST /api/v1/kb/:kbid/feedback': kb('READER'),
  // The predict API (docs/predict.md): the KB's models for its readers, the built-in ones for understanding-API keys
  'GET /api/v1/kb/:kbid/predict/:endpoint': kb('READER'),
  'POST /api/v1/kb/:kbid/predict/:endpoint': kb('READER'),
  'POST /api/v1/kb/:kbid/predict/compat/chat/completions': kb('READER'),
  'POST /api/v1/kb/:kbid/predict/compat/embeddings': kb('READER'),
  'GET /api/v1/kb/:kbid/predict/compat/models': kb('READER'),
  'GET /api/v1/kb/:kbid/generative_providers': kb('READER'),
  'GET /api/v1/kb/:kbid/models': kb('READER'),
  'GET /api/v1/kb/:kbid/model/:model_id': kb('READER'),
  'GET /api/v1/predict/:endpoint': { scope: 'ua-key' },
  'POST /api/v1/predict/:endpoint': { scope: 'ua-key' },
  'POST /api/v1/predict/compat/chat/completions': { scope: 'ua-key' },
  'POST /api/v1/predict/compat/embeddings': { scope: 'ua-key' },
  'GET /api/v1/predict/compat/models': { scope: 'ua-key' },
  // The reference's `/{kbid}` variants: a key's calls on a KB of its account, with that KB's models
  'GET /api/v1/predict/:endpoint/:kbid': UA_KB,
  'POST /api/v1/predict/:endpoint/:kbid': UA_KB,
  'POST /api/v1/predict/compat/chat/completions/:kbid': UA_KB,
  'POST /api/v1/predict/compat/embeddings/:kbid': UA_KB,
  'GET /api/v1/predict/compat/models/:kbid': UA_KB,
  'POST /api/v1/kb/:kbid/summarize': kb('READER'),
  // Activity logs (spec 4.4): every caller's questions, answers and user ids, so the KB's managers only
  'POST /api/v1/kb/:kbid/activity/:event_type/query': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/activity/:event_type/months': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/activity/:event_type/verify': kb('MANAGER'),
  'POST /api/v1/kb/:kbid/activity/:event_type/query/download': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/activity/download_request/:request_id': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/activity/download': kb('MANAGER'),
  // REMi scores (spec 4.4): the scored records carry every caller's questions and answers, so managers only too
  'POST /api/v1/kb/:kbid/remi/query': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/remi/scores': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/remi/events/:event_id': kb('MANAGER'),
  'GET /api/v1/kb/:kbid/labelset/:labelset': kb('READER'),
  'POST /api/v1/kb/:kbid/labelset/:labelset': kb('WRITER'),
  'DELETE /api/v1/kb/:kbid/labelset/:labelset': kb('WRITER'),
  // Entities groups: read by every reader, changed by writers (as label sets)
  'GET /api/v1/kb/:kbid/entitiesgroups': kb('READER'),
  'GET /api/v1/kb/:kbid/entitiesgroup/:group': kb('READER'),
  'POST /api/v1/kb/:kbid/entitiesgroups': kb('WRITER'),
  'PATCH /api/v1/kb/:kbid/entitiesgroup/:group': kb('WRITER'),
  'DELETE /api/v1/kb/:kbid/entitiesgroup/:group': kb('WRITER'),
  ...TUS_ROUTES(''),
  ...TUS_ROUTES('resource/:rid/file/:field_id/'),
  ...TUS_ROUTES('slug/:rslug/file/:field_id/'),
  ...RESOURCE_ROUTES('resource/:rid'),
  ...RESOURCE_ROUTES('slug/:rslug'),
};

export function accessRuleFor(method: string, path: string): AccessRule | undefined {
  return ACCESS_TABLE[`${method.toUpperCase()} ${path}`];
}
