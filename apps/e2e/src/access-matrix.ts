import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACCESS_TABLE } from '@kb/gateway';
import type { CredentialKind, RouteRole } from '@kb/contracts';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import type { Topology } from './support/topologies';

/**
 * Every route of the access table × every kind of credential, over HTTP. Requests that pass the
 * access check carry an invalid body (`[]`) or unknown ids, so nothing is changed by the walk.
 */
type Outcome = 'allowed' | 400 | 401 | 403;

/** The statuses openapi.json declares for a route of the access table; undefined when it leaves the route out. */
function declaredStatuses(): (method: string, route: string) => Set<string> | undefined {
  const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  return (method, route) => {
    const op = doc.paths[route.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}')]?.[method.toLowerCase()];
    return op ? new Set(Object.keys(op.responses ?? {})) : undefined;
  };
}
type AccessRule = (typeof ACCESS_TABLE)[string];

interface Caller {
  name: string;
  header: () => Promise<Record<string, string>>;
  /** What the credential is, for the expectation; undefined for "no valid credential". */
  kind?: CredentialKind;
  kbRole?: 'SOWNER' | 'SCONTRIBUTOR' | 'SMEMBER';
  groups?: boolean;
  otherKb?: boolean;
  broken?: 'none' | 'two' | 'invalid';
  /** Query parameters the credential travels in (an ephemeral token's `eph-token`). */
  query?: () => Promise<string>;
}

const RANK = { SMEMBER: 1, SCONTRIBUTOR: 2, SOWNER: 3 } as const;
const NEED: Record<RouteRole, number> = { READER: 1, WRITER: 2, MANAGER: 3 };
/** Routes whose success would destroy the fixtures the walk stands on: only their refusals are walked. */
const DESTRUCTIVE = new Set([
  'DELETE /api/v1/account/:account_id',
  'DELETE /api/v1/account/:account_id/kb/:kb_id',
  'DELETE /api/v1/kb/:kbid',
  'DELETE /api/v1/user',
]);

/** The /ask routes: the only ones a temporal key with security groups opens (spec 5). Kept apart from the guard's own flag on purpose. */
const GROUP_SCOPED = new Set([
  'POST /api/v1/kb/:kbid/ask',
  'POST /api/v1/kb/:kbid/resource/:rid/ask',
  'POST /api/v1/kb/:kbid/slug/:rslug/ask',
]);

export function expectedOutcome(rule: AccessRule, c: Caller, key = ''): Outcome {
  if (c.broken === 'two') return 400;
  if (rule.scope === 'public') return 'allowed';
  if (c.broken) return 401;
  const kind = c.kind as CredentialKind;
  const user = kind === 'user_token' || kind === 'pat';
  // An ephemeral token opens the download routes of its KB only; anywhere else it is no credential.
  if (kind === 'ephemeral_token' && !(rule.scope === 'kb' && rule.credentials.includes(kind))) return 401;
  if (c.groups && !GROUP_SCOPED.has(key)) return 403; // temporal keys with groups open only /ask
  switch (rule.scope) {
    case 'user':
      return user ? 'allowed' : 403;
    case 'api-key':
      return kind === 'api_key' ? 'allowed' : 403;
    case 'ua-key':
      return kind === 'ua_key' ? 'allowed' : 403;
    case 'caller':
      return rule.credentials.includes(kind) ? 'allowed' : 403;
    case 'account':
      return rule.credentials.includes(kind) && user ? 'allowed' : 403;
    case 'kb':
      if (!rule.credentials.includes(kind) || c.otherKb) return 403;
      return c.kbRole && RANK[c.kbRole] >= NEED[rule.role as RouteRole] ? 'allowed' : 403;
    default:
      return 403;
  }
}

function concretePath(route: string, ids: { kbid: string; account: string }): string {
  return route
    .replace(':kbid', ids.kbid)
    .replace(':kb_id', ids.kbid)
    .replace(':account_id', ids.account)
    .replace(':rid', randomUUID())
    .replace(':rslug', 'no-such-slug')
    .replace(':sa_id', randomUUID())
    .replace(':sa_key_id', randomUUID())
    .replace(':token_id', randomUUID())
    .replace(':labelset', 'no-such-set')
    .replace(':field_type', 'text')
    .replace(':field_id', 'no-such-field')
    .replace(':message_ident', 'm0')
    .replace(':client_id', 'no-such-client')
    .replace(':email', 'nobody@example.com')
    .replace(':processing_id', 'no-such-job')
    .replace(':slug', 'no-such-kb')
    .replace(':group', 'no-such-group')
    .replace(':model_id', 'no-such-model')
    .replace(':user_id', randomUUID())
    .replace(':event_id', '1')
    .replace(':request_id', randomUUID())
    .replace(':endpoint', 'tokens');
}

export function describeAccessMatrix(start: () => Promise<Topology>): void {
  let topology: Topology;
  let http: HttpClient;
  const callers: Caller[] = [];
  let ids: { kbid: string; account: string };

  beforeAll(async () => {
    topology = await start();
    http = topology.http;
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const account = boot.account.id;
    const newKb = async (slug: string) =>
      (await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug } })).body.id;
    const kbA = await newKb(`matrix-a-${Date.now()}`);
    const kbB = await newKb(`matrix-b-${Date.now()}`);
    ids = { kbid: kbA, account };
    const key = async (kb: string, role: string, expiresInMs = 3600_000) => {
      const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_accounts`, {
        credential: pat,
        body: { role },
      });
      const k = await http.call<{ id: string; token: string }>(
        'POST',
        `/api/v1/account/${account}/kb/${kb}/service_account/${sa.body.id}/keys`,
        {
          credential: pat,
          body: { expires: new Date(Date.now() + expiresInMs).toISOString() },
        },
      );
      return { ...k.body, sa: sa.body.id, kb };
    };
    const reader = await key(kbA, 'SMEMBER');
    const writer = await key(kbA, 'SCONTRIBUTOR');
    const manager = await key(kbA, 'SOWNER');
    const other = await key(kbB, 'SOWNER');
    const expiring = await key(kbA, 'SOWNER', 1500);
    const revoked = await key(kbA, 'SOWNER');
    await http.call('DELETE', `/api/v1/account/${account}/kb/${kbA}/service_account/${revoked.sa}/key/${revoked.id}`, { credential: pat });
    const login = await http.call<{ token: string }>('POST', '/api/v1/auth/login', {
      body: { email: boot.user.email, password: boot.user.password },
    });
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/nua_clients`, {
      credential: pat,
      body: { contact: 'ops@example.com' },
    });
    const temporal = async (groups?: string[]) => {
      const res = await http.call<{ token: string }>('POST', '/api/v1/service_account_temporal_key', {
        credential: apiKey(manager.token),
        body: groups ? { security_groups: groups } : {},
      });
      return res.body.token;
    };
    const ephemeral = async () =>
      (await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kbA}/ephemeral_tokens`, { credential: pat, body: {} }))
        .body.token;
    const h = (c: Credential): Record<string, string> => (c ? { [c.header]: c.value } : {});
    callers.push(
      { name: 'user token', kind: 'user_token', kbRole: 'SOWNER', header: async () => h(bearer(login.body.token)) },
      { name: 'PAT', kind: 'pat', kbRole: 'SOWNER', header: async () => h(pat) },
      { name: 'Reader key', kind: 'api_key', kbRole: 'SMEMBER', header: async () => h(apiKey(reader.token)) },
      { name: 'Writer key', kind: 'api_key', kbRole: 'SCONTRIBUTOR', header: async () => h(apiKey(writer.token)) },
      { name: 'Manager key', kind: 'api_key', kbRole: 'SOWNER', header: async () => h(apiKey(manager.token)) },
      { name: "another KB's key", kind: 'api_key', otherKb: true, header: async () => h(apiKey(other.token)) },
      { name: 'temporal key', kind: 'temporal_key', kbRole: 'SOWNER', header: async () => h(apiKey(await temporal())) },
      {
        name: 'temporal key with groups',
        kind: 'temporal_key',
        kbRole: 'SOWNER',
        groups: true,
        header: async () => h(apiKey(await temporal(['g1']))),
      },
      {
        name: 'ephemeral token',
        kind: 'ephemeral_token',
        kbRole: 'SMEMBER',
        header: async () => ({}),
        query: async () => `eph-token=${encodeURIComponent(await ephemeral())}`,
      },
      {
        name: 'ephemeral token and a header',
        broken: 'two',
        header: async () => h(pat),
        query: async () => `eph-token=${encodeURIComponent(await ephemeral())}`,
      },
      { name: 'UA key', kind: 'ua_key', header: async () => ({ 'X-SVC-UAKEY': `Bearer ${ua.body.token}` }) },
      { name: 'no credential', broken: 'none', header: async () => ({}) },
      { name: 'two credentials', broken: 'two', header: async () => ({ ...h(pat), ...h(apiKey(reader.token)) }) },
      { name: 'expired key', broken: 'invalid', header: async () => h(apiKey(expiring.token)) },
      { name: 'revoked key', broken: 'invalid', header: async () => h(apiKey(revoked.token)) },
      { name: 'unknown token', broken: 'invalid', header: async () => h(bearer('kbp_' + '0'.repeat(32) + '_' + 'x'.repeat(43))) },
    );
    await new Promise((r) => setTimeout(r, 1600)); // let the expiring key expire
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('answers every route × credential as the access table says', async () => {
    const failures: string[] = [];
    // Every status the walk meets must be one the document declares for the operation (the document is true to the code).
    const undeclared = new Set<string>();
    const declared = declaredStatuses();
    let checked = 0;
    let compared = 0;
    for (const [key, rule] of Object.entries(ACCESS_TABLE)) {
      const [method, route] = key.split(' ') as [string, string];
      for (const caller of callers) {
        const expected = expectedOutcome(rule, caller, key);
        if (expected === 'allowed' && DESTRUCTIVE.has(key)) continue;
        const withBody = ['POST', 'PATCH', 'PUT'].includes(method) && !route.startsWith('/auth');
        const query = caller.query ? `?${await caller.query()}` : '';
        const res = await fetch(`${http.baseUrl}${concretePath(route, ids)}${query}`, {
          method,
          headers: { ...(await caller.header()), ...(withBody ? { 'content-type': 'application/json' } : {}) },
          body: withBody ? '[]' : undefined,
          redirect: 'manual',
        });
        // The notifications stream does not end by itself: its status is all the walk needs.
        if (res.status === 200 && route.endsWith('/notifications')) await res.body?.cancel();
        else await res.arrayBuffer();
        checked++;
        // On a public route the service itself may answer 401 (a refused SAML response, a wrong password): only 403 would be an access decision.
        const refusals = rule.scope === 'public' ? [400, 403] : [400, 401, 403];
        const ok = expected === 'allowed' ? !refusals.includes(res.status) && res.status < 500 : res.status === expected;
        if (!ok) failures.push(`${key} as ${caller.name}: expected ${expected}, got ${res.status}`);
        const statuses = declared(method, route);
        if (statuses) compared++;
        if (statuses && res.status < 500 && !statuses.has(String(res.status))) undeclared.add(`${key}: ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
    expect([...undeclared].sort()).toEqual([]);
    expect(compared).toBeGreaterThan(Object.keys(ACCESS_TABLE).length * 10);
    expect(checked).toBeGreaterThan(Object.keys(ACCESS_TABLE).length * 10);
  }, 180_000);
}
