import type { OpenAPIObject } from '@nestjs/swagger';
import type { CredentialKind } from '@kb/contracts';
import { ACCESS_TABLE, type AccessRule } from './auth/access-table';
import { ROUTE_DECLARATIONS, type RouteDeclaration } from './openapi-route-errors';
import { declareDownload, declareTus } from './openapi-transfers';
import { isPerRequestQuotaRoute, quotaFeaturesFor } from './quota/quota-features';

type Schema = Record<string, unknown>;
type Media = Record<string, { schema?: Schema }>;
type Response = { description?: string; content?: Media; headers?: Record<string, unknown> };
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema; description?: string };
export type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Media };
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ERROR = { 'application/json': { schema: ref('ErrorResponse') } };
const VALIDATION = { 'application/json': { schema: ref('ValidationErrorResponse') } };
const RATE_LIMITED = { 'application/json': { schema: ref('RateLimitedResponse') } };
const HTML = { 'text/html': { schema: { type: 'string' } } };

/** The access table's routes by document path and method: `/api/v1/kb/{kbid}` + `get`. */
function routesByOperation(): Map<string, { route: string; rule: AccessRule }> {
  const map = new Map<string, { route: string; rule: AccessRule }>();
  for (const [route, rule] of Object.entries(ACCESS_TABLE)) {
    const [method, path] = route.split(' ') as [string, string];
    map.set(`${method.toLowerCase()} ${path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}')}`, { route, rule });
  }
  return map;
}

/** The quota guard's features, in words. */
const QUOTA_WORDS: Record<string, string> = {
  search: 'searches',
  ask: 'generated answers',
  processing: 'processing',
  storage: 'storage',
  self_hosted_search: 'self-hosted searches',
  self_hosted_ask: 'self-hosted answers',
};
/** The understanding-API keys' predict routes: which limit applies depends on the endpoint (a search or an answer; the others never). */
const PER_REQUEST_FEATURES = ['self_hosted_search', 'self_hosted_ask'];

/** What a path parameter names, when the service looks it up (a 404 when it is not there). */
const LOOKED_UP: Record<string, string> = {
  kbid: 'the Knowledge Box',
  kb_id: 'the Knowledge Box',
  account_id: 'the account',
  rid: 'the resource',
  rslug: 'the resource',
  field_id: 'the field',
  message_ident: 'the message',
  download_field: 'the extracted file',
  upload_id: 'the upload',
  sa_id: 'the service account',
  sa_key_id: 'the key',
  client_id: 'the client',
  user_id: 'the user',
  email: 'the invitation',
  domain: 'the domain claim',
  export_id: 'the export',
  import_id: 'the import',
  backup_id: 'the backup',
  labelset: 'the label set',
  group: 'the entities group',
  config_name: 'the configuration',
  schema_id: 'the schema',
  strategy_id: 'the strategy',
  vectorset_id: 'the semantic model',
  model_id: 'the model',
  filename: 'the file',
  request_id: 'the download request',
  event_id: 'the scored request',
};

const roleText = (rule: AccessRule): string => {
  const kinds = (credentials: readonly CredentialKind[]) => credentials.map((c) => c.replace('_', ' ')).join(', ');
  switch (rule.scope) {
    case 'user':
      return 'The credential is not a user token or personal access token';
    case 'api-key':
      return 'The credential is not an API key (X-SVC-SERVICEACCOUNT)';
    case 'ua-key':
      return 'The credential is not an understanding-API key (X-SVC-UAKEY)';
    case 'caller':
      return `The credential is not one of: ${kinds(rule.credentials)}`;
    case 'account':
      return `The caller is not ${rule.role === 'AOWNER' ? 'an owner (AOWNER)' : 'a member'} of the account, or the credential is not one of: ${kinds(rule.credentials)}`;
    case 'kb':
      return `The caller does not hold the ${rule.role} role on the Knowledge Box, or the credential is not one of: ${kinds(rule.credentials)}${rule.groupScoped ? '' : '; a temporal key with security groups opens only /ask'}`;
    default:
      return '';
  }
};

/** The statuses a route returns on its own (the guard, the edge's middleware, its inputs), and when. */
function errorsOf(
  method: string,
  path: string,
  op: Operation,
  route: string,
  rule: AccessRule,
  own: RouteDeclaration,
): Map<string, string> {
  const errors = new Map<string, string>();
  const jsonBody = Object.keys(op.requestBody?.content ?? {}).some((t) => /json/.test(t));
  const params = op.parameters ?? [];
  const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  errors.set('400', 'Two credentials in one request (two credential headers, or a header and the eph-token parameter)');
  errors.set(
    '401',
    rule.scope === 'public'
      ? 'A credential header that is not `Bearer <token>` (this route needs none)'
      : 'No credential, or one that is malformed, unknown, expired or revoked',
  );
  if (rule.scope !== 'public') errors.set('403', roleText(rule));
  const own404 = own.errors?.['404'];
  // A route of an understanding-API key that names a KB: one outside the key's account is as unknown as a missing one.
  const namesKb = rule.scope === 'kb' || rule.scope === 'account' || (rule.scope === 'ua-key' && rule.kbParam !== undefined);
  if (namesKb || own404) {
    const nouns = pathNames
      .filter((n) => !created(method, path, n))
      .map((n) => LOOKED_UP[n])
      .filter((n): n is string => n !== undefined);
    const generic = `Not found: ${[...new Set(nouns)].join(', ')}`;
    errors.set('404', own404 && namesKb ? `${own404}; or: ${generic}` : (own404 ?? generic));
  }
  const routePath = route.split(' ')[1] as string;
  const features = isPerRequestQuotaRoute(method, routePath) ? PER_REQUEST_FEATURES : quotaFeaturesFor(method, routePath);
  if (features.length > 0 || own.errors?.['402']) {
    errors.set(
      '402',
      own.errors?.['402'] ?? `The account has reached its monthly limit of ${features.map((f) => QUOTA_WORDS[f] ?? f).join(' or ')}`,
    );
  }
  if (jsonBody) {
    errors.set('413', 'The JSON body is larger than the limit (JSON_BODY_LIMIT on content routes, JSON_DEFAULT_BODY_LIMIT elsewhere)');
    errors.set('415', 'A body that is not application/json');
  }
  if (op.requestBody || params.length > 0 || pathNames.length > 0) {
    const parts = [
      op.requestBody ? 'body' : '',
      params.some((p) => p.in === 'query') ? 'query' : '',
      params.some((p) => p.in === 'header') ? 'headers' : '',
      pathNames.length > 0 ? 'path' : '',
    ];
    errors.set('422', `Invalid ${parts.filter(Boolean).join(', ')}: every mistake, each with its location`);
  }
  if (/^\/api\/v1\/(auth\/|saml\/\{account_id\}\/acs$)/.test(path) && method !== 'get') {
    errors.set('429', 'Too many sign-in requests from this address');
  }
  for (const [status, text] of Object.entries(own.errors ?? {})) if (status !== '404') errors.set(status, text);
  return errors;
}

/**
 * A path parameter the operation creates rather than looks up: a field written by PUT or an
 * upload, the name at the end of a POST path (a configuration, a label set, a model to add).
 */
function created(method: string, path: string, name: string): boolean {
  if (name === 'kbid' || name === 'kb_id' || name === 'account_id') return false;
  if (name === 'field_id') return method === 'put' || /\/(upload|tusupload)$/.test(path);
  return method === 'post' && path.endsWith(`{${name}}`);
}

/** A controller's own description first, then what the route shares with its kind (unless it says the same). */
function combined(declared: string | undefined, generic: string, status: string): string {
  if (!declared) return generic;
  if (status === '422' || declared === generic || generic.includes(declared)) return declared;
  return `${declared}; or: ${generic}`;
}

function contentFor(status: string, method: string, html: boolean): Media | undefined {
  if (method === 'head') return undefined;
  // Its own refusals are pages; the edge's (two credentials, a malformed header, its input checks, the rate limit) JSON.
  if (html && status !== '400' && status !== '429') return { ...HTML, ...(status === '422' ? VALIDATION : ERROR) };
  if (status === '422') return VALIDATION;
  if (status === '429') return RATE_LIMITED;
  return ERROR;
}

/**
 * Declares every operation's error responses: the ones its access rule implies (401 without a
 * credential, 403 without the role, 404 for a KB or account the caller cannot see), the edge's
 * (400 two credentials; 413/415 for JSON bodies; 422 for a route with inputs; 429 on the sign-in
 * routes; 402 where the quota guard admits work), and the route's own (ROUTE_DECLARATIONS and the
 * controllers' decorators, whose descriptions are kept). Each gets the body the error filter sends.
 * Also sets each operation's security requirement from its access rule, and declares downloads.
 */
export function declareErrorResponses(doc: OpenAPIObject): OpenAPIObject {
  const routes = routesByOperation();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, value] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !value || typeof value !== 'object') continue;
      const op = value as Operation;
      const found = routes.get(`${method} ${path}`);
      if (!found) throw new Error(`openapi: no access rule for ${method.toUpperCase()} ${path}`);
      const own = ROUTE_DECLARATIONS[found.route] ?? {};
      if (own.tus) declareTus(op, own.tus);
      op.security = securityOf(found.rule);
      for (const [status, description] of errorsOf(method, path, op, found.route, found.rule, own)) {
        const declared = op.responses[status];
        const content = contentFor(status, method, own.htmlErrors === true);
        op.responses[status] = {
          description: combined(declared?.description, description, status),
          ...(declared?.content ? { content: declared.content } : content ? { content } : {}),
        };
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (/^[45]/.test(status) && !response.content && method !== 'head')
          response.content = contentFor(status, method, own.htmlErrors === true);
      }
      if (own.download) declareDownload(op, own.download === true ? undefined : own.download);
      op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return doc;
}

/** The credential schemes a rule accepts (OpenAPI: any one of the listed requirements). */
function securityOf(rule: AccessRule): Record<string, string[]>[] {
  const byKind = (kinds: readonly CredentialKind[]) => {
    const schemes = new Set<string>();
    for (const k of kinds) {
      if (k === 'user_token' || k === 'pat') schemes.add('bearer');
      else if (k === 'api_key' || k === 'temporal_key') schemes.add('apiKey');
      else if (k === 'ua_key') schemes.add('uaKey');
      else if (k === 'ephemeral_token') schemes.add('ephemeralToken');
    }
    return [...schemes].map((s) => ({ [s]: [] }));
  };
  switch (rule.scope) {
    case 'public':
      return [];
    case 'user':
      return [{ bearer: [] }];
    case 'api-key':
      return [{ apiKey: [] }];
    case 'ua-key':
      return [{ uaKey: [] }];
    default:
      return byKind(rule.credentials);
  }
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
