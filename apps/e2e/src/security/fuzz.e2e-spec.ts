import fc from 'fast-check';
import { ACCESS_TABLE } from '@kb/gateway';
import { apiKey, bearer, type Credential, type HttpClient } from '../support/http-client';
import { startStandalone, type Topology } from '../support/topologies';
import { headerValue, hostileId, mutatedBody, type Json } from './fuzz-inputs';
import { resourceProcessed } from '../support/kb-fixtures';

/**
 * Property-based fuzzing over HTTP: mutated valid bodies on every JSON write and query route of
 * the access table, hostile headers and hostile path ids. Whatever comes in, the answer is never a
 * 5xx, and a refused write (4xx) changes nothing that a cheap snapshot of the KB and account sees.
 * The seed is fixed (FUZZ_SEED overrides it to explore; FUZZ_SCALE multiplies the runs).
 */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261126);
const SCALE = Number(process.env['FUZZ_SCALE'] ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

/** Ten routes fuzzed hardest (the ones that answered 500 before), then every other JSON route. */
const FOCUS = new Set([
  'POST /api/v1/kb/:kbid/resources',
  'PATCH /api/v1/kb/:kbid/resource/:rid',
  'POST /api/v1/kb/:kbid/find',
  'POST /api/v1/kb/:kbid/search',
  'POST /api/v1/kb/:kbid/catalog',
  'POST /api/v1/kb/:kbid/suggest',
  'POST /api/v1/kb/:kbid/ask',
  'POST /api/v1/kb/:kbid/graph',
  'POST /api/v1/kb/:kbid/labelset/:labelset',
  'PATCH /api/v1/kb/:kbid/configuration',
]);
/** Bodies are files or forms there, not JSON: their own specs cover them. */
const NOT_JSON = /(upload|tusupload)(\/|$)|\/import$|^POST \/auth|\/saml\//;
/** Reads with a body: no snapshot needed. */
const READS =
  /\/(find|search|catalog|catalog\/facets|suggest|ask|graph|graph\/nodes|graph\/relations|feedback|activity\/[a-z]+\/query)$|\/predict\/|processing\/pull$|auth\/login$|temporal_key$/;

interface Ctx {
  kbid: string;
  account: string;
  rid: string;
  saId: string;
  victimClient: string;
  api: NonNullable<Credential>;
  pat: NonNullable<Credential>;
  ua: NonNullable<Credential>;
}

const VALID: Record<string, (c: Ctx) => unknown> = {
  'POST /api/v1/kb/:kbid/resources': () => ({
    title: 'Fuzzed',
    summary: 's',
    texts: { t: { body: 'Some text about the sea.', format: 'PLAIN' } },
    conversations: { c: { messages: [{ ident: 'm1', content: { text: 'hi' } }] } },
    usermetadata: { classifications: [{ labelset: 'topics', label: 'sea' }] },
    origin: { tags: ['x'], metadata: { k: 'v' }, url: 'https://example.com/a' },
    extra: { metadata: { k: 'v' } },
    security: { access_groups: ['g1'] },
    metadata: { language: 'en' },
    hidden: false,
  }),
  'PATCH /api/v1/kb/:kbid/resource/:rid': () => ({
    title: 'Patched',
    texts: { t2: { body: 'More text.' } },
    origin: { tags: ['y'] },
    extra: { metadata: { a: 1 } },
    usermetadata: { classifications: [{ labelset: 'topics', label: 'sea' }] },
  }),
  'PATCH /api/v1/kb/:kbid/slug/:rslug': () => ({ summary: 'Patched by slug' }),
  'PUT /api/v1/kb/:kbid/resource/:rid/text/:field_id': () => ({ body: 'A text field.', format: 'MARKDOWN' }),
  'PUT /api/v1/kb/:kbid/resource/:rid/conversation/:field_id/messages': () => [
    { ident: 'fz1', content: { text: 'a message' }, who: 'user', to: ['bot'] },
  ],
  'PUT /api/v1/kb/:kbid/resource/:rid/conversation/:field_id': () => ({ messages: [{ ident: 'a', content: { text: 'x' } }] }),
  'POST /api/v1/kb/:kbid/find': () => ({
    query: 'sea',
    features: ['keyword', 'semantic'],
    top_k: 5,
    filters: ['/classification.labels/topics/sea'],
    fields: ['t/t'],
    show: ['basic'],
    extracted: ['text'],
    filter_expression: {
      field: { and: [{ prop: 'label', labelset: 'topics', label: 'sea' }, { not: { prop: 'field', type: 'text', name: 'x' } }] },
    },
    security: { groups: ['g1'] },
    min_score: { bm25: 0, semantic: 0 },
    keyword_filters: ['sea'],
    resource_filters: ['00000000-0000-4000-8000-000000000000'],
  }),
  'POST /api/v1/kb/:kbid/search': () => ({
    query: 'sea',
    features: ['keyword', 'fulltext', 'semantic'],
    faceted: ['/classification.labels/topics'],
    filters: ['/classification.labels/topics/sea'],
    top_k: 5,
    sort: { field: 'created', order: 'desc' },
    fields: ['t/t'],
  }),
  'POST /api/v1/kb/:kbid/catalog': () => ({
    query: 'sea',
    filters: ['/classification.labels/topics/sea'],
    faceted: ['/classification.labels'],
    page_size: 20,
    page_number: 0,
    sort: { field: 'created', order: 'desc' },
    filter_expression: { resource: { prop: 'resource', id: '00000000-0000-4000-8000-000000000000' } },
  }),
  'POST /api/v1/kb/:kbid/catalog/facets': () => ({ facets: ['/classification.labels/topics'] }),
  'POST /api/v1/kb/:kbid/activity/:event_type/query': () => ({
    year_month: '2026-11',
    show: ['question', 'answer', 'audit_metadata.team'],
    pagination: { limit: 5, starting_after: 1 },
    filters: {
      user_type: { eq: 'user' },
      total_duration: { ge: 0, lt: 1000 },
      question: { ilike: '%sea%' },
      feedback_good: { isnull: false },
      audit_metadata: [{ key: 'team', like: 'b\\_%' }],
    },
  }),
  'POST /api/v1/kb/:kbid/suggest': () => ({
    query: 'se',
    features: ['paragraph', 'entities'],
    fields: ['t/t'],
    filters: ['/classification.labels/topics/sea'],
    show: ['basic'],
  }),
  'POST /api/v1/kb/:kbid/ask': () => ({
    query: 'What about the sea?',
    context: [
      { author: 'USER', text: 'hi' },
      { author: 'NUCLIA', text: 'hello' },
    ],
    extra_context: ['The sea is salty.'],
    top_k: 5,
    features: ['keyword', 'semantic'],
    filters: ['/classification.labels/topics/sea'],
    citations: true,
    rag_strategies: [{ name: 'neighbouring_paragraphs', before: 1, after: 1 }],
    prequeries: null,
    max_tokens: 100,
  }),
  'POST /api/v1/kb/:kbid/resource/:rid/ask': () => ({ query: 'What is this about?', top_k: 3 }),
  'POST /api/v1/kb/:kbid/slug/:rslug/ask': () => ({ query: 'What is this about?' }),
  'POST /api/v1/kb/:kbid/graph': () => ({
    query: { prop: 'path', source: { value: 'sea' }, relation: { label: 'near' }, destination: { value: 'x', group: 'PLACE' } },
    top_k: 10,
  }),
  'POST /api/v1/kb/:kbid/graph/nodes': () => ({
    query: {
      or: [
        { prop: 'node', value: 'Sea', match: 'fuzzy' },
        { prop: 'node', group: 'PLACE' },
      ],
    },
    top_k: 10,
  }),
  'POST /api/v1/kb/:kbid/graph/relations': () => ({ query: { prop: 'relation', label: 'near' }, top_k: 10 }),
  'POST /api/v1/kb/:kbid/feedback': () => ({ ident: 'abc', good: true, task: 'CHAT', feedback: 'fine' }),
  'POST /api/v1/kb/:kbid/labelset/:labelset': () => ({
    title: 'Topics',
    color: 'blue',
    multiple: true,
    kind: ['RESOURCES'],
    labels: [{ title: 'sea' }, { title: 'land', related: 'x' }],
  }),
  'PATCH /api/v1/kb/:kbid/configuration': () => ({
    summary: 'simple',
    prefer_markdown_generative_response: true,
    user_prompts: { openai: { prompt: 'Answer {question} from {context}' } },
    user_keys: { openai: { key: 'sk-x', url: 'https://example.com/v1' } },
  }),
  'POST /api/v1/kb/:kbid/configuration': () => ({
    generative_model: 'generative-multilingual-2023',
    semantic_models: ['en-use-lite-2024'],
  }),
  'PATCH /api/v1/config/:kbid': () => ({ summary: 'simple', prefer_markdown_generative_response: true }),
  'POST /api/v1/config/:kbid': () => ({ generative_model: 'generative-multilingual-2023', semantic_models: ['en-use-lite-2024'] }),
  'POST /api/v1/kb/:kbid/entitiesgroups': () => ({
    group: 'FUZZ',
    title: 'Fuzz',
    color: 'red',
    entities: { sea: { value: 'sea', merged: false, represents: ['ocean'] } },
  }),
  'PATCH /api/v1/kb/:kbid/entitiesgroup/:group': () => ({
    title: 'Fuzz',
    add: { land: { value: 'land' } },
    update: { sea: { value: 'Sea' } },
    delete: ['x'],
  }),
  'PUT /api/v1/kb/:kbid/custom-synonyms': () => ({ synonyms: { planet: ['globe', 'world'], sea: ['ocean'] } }),
  'POST /api/v1/kb/:kbid/search_configurations/:config_name': () => ({
    kind: 'find',
    config: {
      query: 'sea',
      top_k: 3,
      features: ['keyword'],
      filter_expression: { field: { prop: 'label', labelset: 'topics', label: 'sea' } },
    },
  }),
  'PATCH /api/v1/kb/:kbid/search_configurations/:config_name': () => ({
    kind: 'ask',
    config: { top_k: 2, citations: true, rag_strategies: [{ name: 'neighbouring_paragraphs', before: 1, after: 1 }] },
  }),
  'POST /api/v1/kb/:kbid/kv-schemas': () => ({
    name: 'fuzz',
    description: 'd',
    fields: [
      { key: 'total', type: 'float', range: true },
      { key: 'who', type: 'text', required: false },
    ],
  }),
  'PUT /api/v1/kb/:kbid/kv-schemas/:schema_id': () => ({ description: 'd', fields: [{ key: 'k', type: 'date', range: true }] }),
  'POST /api/v1/kb/:kbid/split_strategies': () => ({ name: 'small', split: { max_paragraph: 200, overlap: 20 } }),
  'POST /api/v1/kb/:kbid/extract_strategies': () => ({ name: 'no-ocr', ocr: false, split: { max_paragraph: 500 } }),
  'POST /api/v1/kb/:kbid/resource/:rid/reindex': () => ({ reindex_vectors: false }),
  'POST /api/v1/service_account_temporal_key': () => ({ ttl: 5, security_groups: ['g1'] }),
  'PATCH /api/v1/user': () => ({ name: 'Admin', language: 'en' }),
  'POST /api/v1/user/pa_tokens': () => ({ description: 'fuzz', expiration_date: '2030-01-01T00:00:00Z' }),
  'POST /api/v1/accounts': () => ({ slug: 'fuzz-account', title: 'Fuzz' }),
  'PATCH /api/v1/account/:account_id': () => ({ title: 'Default', description: 'd' }),
  'PATCH /api/v1/account/:account_id/users': () => ({ add: [], update: [], delete: [] }),
  'POST /api/v1/account/:account_id/invite': () => ({ email: 'someone@example.com', role: 'AMEMBER' }),
  'POST /api/v1/invites/accept': () => ({ token: 'x' }),
  'POST /api/v1/account/:account_id/nua_clients': () => ({
    contact: 'ops@example.com',
    title: 't',
    description: 'd',
    processing_webhook: { uri: 'https://example.com/hook', headers: { a: 'b' } },
  }),
  'PATCH /api/v1/account/:account_id/nua_client/:client_id': () => ({
    title: 'renamed',
    processing_webhook: { uri: 'https://example.com/hook2' },
  }),
  'PATCH /api/v1/account/:account_id/kb/:kb_id/users': () => ({ add: [], update: [], delete: [] }),
  'POST /api/v1/account/:account_id/kb/:kb_id/invite': () => ({ email: 'someone@example.com', role: 'SMEMBER' }),
  'POST /api/v1/account/:account_id/kbs': () => ({
    slug: 'fuzz-kb',
    title: 'Fuzz KB',
    description: 'd',
    learning_configuration: { semantic_models: ['en-use-lite-2024'] },
  }),
  'PATCH /api/v1/account/:account_id/kb/:kb_id': () => ({
    title: 'Default KB',
    description: 'd',
    allowed_origins: ['https://example.com'],
  }),
  'POST /api/v1/kbs': () => ({
    slug: 'fuzz-kb-standalone',
    title: 'Fuzz KB',
    description: 'd',
    learning_configuration: { semantic_models: ['en-use-lite-2024'] },
  }),
  'PATCH /api/v1/kb/:kbid': () => ({ title: 'Default KB', description: 'd', allowed_origins: ['https://example.com'] }),
  'POST /api/v1/account/:account_id/kb/:kb_id/service_accounts': () => ({ title: 'fuzz', role: 'SMEMBER' }),
  'POST /api/v1/account/:account_id/kb/:kb_id/service_account/:sa_id/keys': () => ({ expires: '2030-01-01T00:00:00Z' }),
  'POST /api/v1/account/:account_id/models/:kb_id': () => ({ id: 'model-x' }),
  'POST /api/v1/models/:kbid': () => ({ id: 'model-x' }),
  'POST /api/v1/kb/:kbid/predict/:endpoint': () => ({
    question: 'what about the sea',
    user_id: 'u',
    context: { a: 'The sea is wide.', b: 'Bread.' },
  }),
  'POST /api/v1/predict/:endpoint': () => ({ question: 'what about the sea', context: { a: 'The sea is wide.' } }),
  'POST /api/v1/kb/:kbid/predict/compat/chat/completions': () => ({
    model: 'extractive',
    messages: [
      { role: 'system', content: 'The sea is wide.' },
      { role: 'user', content: 'How is the sea?' },
    ],
    max_tokens: 50,
  }),
  'POST /api/v1/predict/compat/chat/completions': () => ({ messages: [{ role: 'user', content: 'hi' }] }),
  'POST /api/v1/kb/:kbid/predict/compat/embeddings': () => ({ input: ['The sea.', 'Bread.'], encoding_format: 'base64' }),
  'POST /api/v1/predict/compat/embeddings': () => ({ input: 'The sea.' }),
  'POST /api/v1/processing/push': (c) => ({
    kbid: c.kbid,
    uuid: null,
    title: 'Pushed',
    labels: ['l'],
    textfield: { body: { body: 'Pushed text.' } },
    processing_options: { ml_text: true },
  }),
  'POST /api/v2/processing/pull': () => ({ timeout: 0, limit: 1 }),
  'POST /api/v1/auth/login': () => ({ email: 'nobody@example.com', password: 'a wrong password' }),
  'POST /api/v1/auth/signup': () => ({ email: 'fuzz-user@example.com', password: 'a long enough password', name: 'F' }),
};

function fill(route: string, c: Ctx, id?: string): string {
  return route
    .replace(':kbid', c.kbid)
    .replace(':kb_id', c.kbid)
    .replace(':account_id', c.account)
    .replace(':rid', c.rid)
    .replace(':rslug', 'existing')
    .replace(':field_id', 'fz')
    .replace(':labelset', 'fuzz')
    .replace(':sa_id', c.saId)
    .replace(':client_id', c.victimClient)
    .replace(':vectorset_id', 'no-such-model')
    .replace(':group', 'FUZZ')
    .replace(':message_ident', 'm1')
    .replace(':field_type', 'text')
    .replace(':event_type', 'chat')
    .replace(':endpoint', 'rerank')
    .replace(/:[a-z_]+/g, id ?? 'x')
    .replace('*download_field', 'x');
}

function credentialFor(rule: (typeof ACCESS_TABLE)[string], c: Ctx): Credential {
  switch (rule.scope) {
    case 'public':
      return null;
    case 'user':
    case 'account':
      return c.pat;
    case 'api-key':
      return c.api;
    case 'ua-key':
      return c.ua;
    case 'caller':
      return c.api;
    case 'kb':
      return rule.credentials.includes('api_key') ? c.api : c.pat;
  }
}

/** The members of two snapshots that differ (with the first differing value of each, for the report). */
function changedParts(before: unknown, after: unknown): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  return Object.keys(a)
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .map((k) => {
      const [x, y] = [JSON.stringify(a[k]), JSON.stringify(b[k])];
      let i = 0;
      while (i < x.length && x[i] === y[i]) i++;
      return `${k}: …${x.slice(Math.max(0, i - 60), i + 100)} → …${y.slice(Math.max(0, i - 60), i + 100)}`;
    });
}

interface Finding {
  what: string;
  status: number;
  sent: string;
  answer: string;
}

describe('security: fuzzing never gets a 5xx, and refused writes change nothing', () => {
  let topology: Topology;
  let http: HttpClient;
  let ctx: Ctx;

  beforeAll(async () => {
    topology = await startStandalone({ AUTH_RATE_LIMIT_BURST: '100000', AUTH_RATE_LIMIT_PER_MINUTE: '100000' });
    http = topology.http;
    const boot = topology.bootstrap();
    const api = apiKey(boot.api_key.token);
    const pat = bearer(boot.personal_access_token.token);
    const kbid = boot.kb.id;
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: api,
      body: { title: 'Existing', slug: 'existing', texts: { t: { body: 'The sea is wide.' } } },
    });
    expect(created.status).toBe(201);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kbid}/labelset/topics`, {
          credential: api,
          body: { title: 'Topics', labels: [{ title: 'sea' }] },
        })
      ).status,
    ).toBe(200);
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kbid}/service_accounts`, {
      credential: pat,
      body: { title: 'victim', role: 'SMEMBER' },
    });
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat,
      body: { contact: 'ops@example.com' },
    });
    const victim = await http.call<{ client_id: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat,
      body: { contact: 'victim@example.com' },
    });
    ctx = {
      kbid,
      account: boot.account.id,
      rid: created.body.uuid,
      saId: sa.body.id,
      victimClient: victim.body.client_id,
      api,
      pat,
      ua: { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` },
    };
    await resourceProcessed(http, api, kbid, ctx.rid);
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  /**
   * What a refused write must leave as it was: the KB's content and settings, or the account's.
   * Processing output (summary, extracted data, statuses) is left out: it moves on its own.
   */
  const snapshot = async (scope: 'kb' | 'account' | 'all' = 'all'): Promise<Record<string, unknown>> => {
    const get = async (path: string, credential: Credential) => {
      const res = await http.call<Record<string, unknown>>('GET', path, { credential });
      if (res.status !== 200) throw new Error(`snapshot: GET ${path} answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      return res.body;
    };
    const out: Record<string, unknown> = {};
    if (scope !== 'account') {
      const list = (await get(`/api/v1/kb/${ctx.kbid}/resources?size=200`, ctx.api)) as { resources: { id: string; title: string }[] };
      const existing = await get(
        `/api/v1/kb/${ctx.kbid}/resource/${ctx.rid}?show=basic&show=values&show=origin&show=extra&show=security`,
        ctx.api,
      );
      const values = Object.fromEntries(
        Object.entries((existing['data'] ?? {}) as Record<string, Record<string, { value: unknown }>>).map(([k, fields]) => [
          k,
          Object.fromEntries(Object.entries(fields).map(([f, v]) => [f, v.value])),
        ]),
      );
      out['resources'] = list.resources.map((r) => `${r.id} ${r.title}`).sort();
      out['existing'] = {
        title: existing['title'],
        slug: existing['slug'],
        hidden: existing['hidden'],
        usermetadata: existing['usermetadata'],
        origin: existing['origin'],
        extra: existing['extra'],
        security: existing['security'],
        values,
      };
      out['labelsets'] = await get(`/api/v1/kb/${ctx.kbid}/labelsets`, ctx.api);
      out['configuration'] = await get(`/api/v1/kb/${ctx.kbid}/configuration`, ctx.api);
      out['synonyms'] = await get(`/api/v1/kb/${ctx.kbid}/custom-synonyms`, ctx.api);
      out['entitiesgroups'] = await get(`/api/v1/kb/${ctx.kbid}/entitiesgroups`, ctx.api);
      // Saved configurations, read together (the snapshot runs around every refused write).
      [out['searchConfigurations'], out['kvSchemas'], out['splitStrategies'], out['extractStrategies']] = await Promise.all(
        ['search_configurations', 'kv-schemas', 'split_strategies', 'extract_strategies'].map((p) =>
          get(`/api/v1/kb/${ctx.kbid}/${p}`, ctx.api),
        ),
      );
    }
    if (scope !== 'kb') {
      out['account'] = await get(`/api/v1/account/${ctx.account}`, ctx.pat);
      out['kbs'] = await get(`/api/v1/account/${ctx.account}/kbs`, ctx.pat);
      out['serviceAccounts'] = await get(`/api/v1/account/${ctx.account}/kb/${ctx.kbid}/service_accounts`, ctx.pat);
    }
    return out;
  };

  const send = async (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; text: string }> => {
    try {
      const res = await fetch(`${http.baseUrl}${path}`, { method, headers, body });
      return { status: res.status, text: (await res.text()).slice(0, 4000) };
    } catch (err) {
      // A connection the server dropped is as bad as a 500.
      return { status: 599, text: String((err as Error).cause ?? err) };
    }
  };

  const jsonRoutes = Object.entries(ACCESS_TABLE).filter(([key]) => /^(POST|PUT|PATCH) /.test(key) && !NOT_JSON.test(key));

  it('covers the ten routes of the report and every other JSON write route', () => {
    for (const focus of FOCUS) expect(jsonRoutes.map(([k]) => k)).toContain(focus);
    expect(jsonRoutes.length).toBeGreaterThanOrEqual(40);
  });

  /** What the fuzz and the issue found answering 500, each now a 422 naming the member. */
  const regressions: [string, string, string, unknown, (string | number)[]][] = [
    [
      'constructor.prototype on /ask',
      'POST',
      '/api/v1/kb/{kbid}/ask',
      JSON.parse('{"constructor":{"prototype":{}}}'),
      ['body', 'constructor'],
    ],
    [
      'constructor.prototype on /search',
      'POST',
      '/api/v1/kb/{kbid}/search',
      JSON.parse('{"constructor":{"prototype":{}}}'),
      ['body', 'constructor'],
    ],
    [
      'texts.constructor on a resource PATCH',
      'PATCH',
      '/api/v1/kb/{kbid}/resource/{rid}',
      JSON.parse('{"texts":{"constructor":{"body":"x"}}}'),
      ['body', 'texts', 'constructor'],
    ],
    [
      '__proto__ in usermetadata',
      'PATCH',
      '/api/v1/kb/{kbid}/resource/{rid}',
      JSON.parse('{"usermetadata":{"__proto__":{"classifications":[]}}}'),
      ['body', 'usermetadata', '__proto__'],
    ],
    [
      '__proto__ in user_keys',
      'PATCH',
      '/api/v1/kb/{kbid}/configuration',
      JSON.parse('{"user_keys":{"__proto__":{"key":"x"}}}'),
      ['body', 'user_keys', '__proto__'],
    ],
    ['a NUL byte in a /catalog filter', 'POST', '/api/v1/kb/{kbid}/catalog', { filters: ['\u0000'] }, ['body', 'filters', 0]],
    ['a NUL byte in a GET /catalog filter', 'GET', '/api/v1/kb/{kbid}/catalog?filters=%00', undefined, ['query', 'filters']],
    [
      'a NUL byte in a label',
      'POST',
      '/api/v1/kb/{kbid}/labelset/fuzz',
      { labels: [{ title: 'a\u0000' }] },
      ['body', 'labels', 0, 'title'],
    ],
    [
      'a list inside the list of labels',
      'POST',
      '/api/v1/kb/{kbid}/labelset/fuzz',
      { labels: [[{ title: 'sea' }]] },
      ['body', 'labels', 0],
    ],
    [
      'a list where the resource origin object is expected',
      'PATCH',
      '/api/v1/kb/{kbid}/resource/{rid}',
      { origin: [{ tags: ['x'] }] },
      ['body', 'origin'],
    ],
    ['objects where /find features are strings', 'POST', '/api/v1/kb/{kbid}/find', { features: [{}] }, ['body', 'features', 0]],
    ['a resource id that is not a uuid', 'GET', '/api/v1/kb/{kbid}/resource/undefined', undefined, ['path', 'rid']],
    ['a KB id that is not a uuid', 'GET', '/api/v1/kb/undefined/resources', undefined, ['path', 'kbid']],
    [
      'an account KB id that is not a uuid',
      'GET',
      '/api/v1/account/{account}/kb/..%2F..%2Fetc%2Fpasswd/users',
      undefined,
      ['path', 'kb_id'],
    ],
    [
      '50 000 catalog filters',
      'POST',
      '/api/v1/kb/{kbid}/catalog',
      { filters: Array.from({ length: 50_000 }, (_, i) => `/t/x${i}`) },
      ['body', 'filters'],
    ],
    [
      'JSON nested 3000 deep',
      'POST',
      '/api/v1/kb/{kbid}/find',
      JSON.parse(`${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`),
      ['body', ...Array<string>(32).fill('a')],
    ],
  ];

  it.each(regressions)('regression: %s → 422 naming the member, nothing changed', async (_name, method, template, body, loc) => {
    const path = template.replace('{kbid}', ctx.kbid).replace('{rid}', ctx.rid).replace('{account}', ctx.account);
    const credential = path.startsWith('/api/v1/account/') ? ctx.pat : ctx.api;
    const before = await snapshot();
    const res = await send(
      method,
      path,
      { 'content-type': 'application/json', [credential.header]: credential.value },
      body === undefined ? undefined : JSON.stringify(body),
    );
    expect(res.status).toBe(422);
    const detail = (JSON.parse(res.text) as { detail: { loc: unknown[] }[] }).detail;
    expect(detail.map((d) => d.loc)).toContainEqual(loc);
    expect(changedParts(before, await snapshot())).toEqual([]);
  });

  it('mutated bodies on every JSON route', async () => {
    const findings: Finding[] = [];
    for (const [key, rule] of jsonRoutes) {
      const [method, route] = key.split(' ') as [string, string];
      const valid = (VALID[key] ?? (() => ({})))(ctx) as Json;
      const credential = credentialFor(rule, ctx);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        ...(credential ? { [credential.header]: credential.value } : {}),
      };
      if (key.endsWith('/ask')) headers['x-synchronous'] = 'true';
      const write = !READS.test(key);
      const scope = key.includes('/api/v1/kb/') ? 'kb' : 'account';
      const bodies = fc.sample(mutatedBody(valid), { seed: SEED, numRuns: runs(FOCUS.has(key) ? 40 : 8) });
      for (const body of bodies) {
        const sent = JSON.stringify(body);
        const before = write ? await snapshot(scope) : undefined;
        const res = await send(method, fill(route, ctx), headers, sent);
        if (res.status >= 500) findings.push({ what: key, status: res.status, sent: sent.slice(0, 300), answer: res.text });
        else if (write && res.status >= 400) {
          const changed = changedParts(before, await snapshot(scope));
          if (changed.length > 0)
            findings.push({
              what: `${key} (refused, changed ${changed.join(', ')})`,
              status: res.status,
              sent: sent.slice(0, 300),
              answer: res.text,
            });
        }
      }
    }
    expect(findings).toEqual([]);
  }, 600_000);

  it('hostile path ids on every route', async () => {
    const findings: Finding[] = [];
    const routes = Object.entries(ACCESS_TABLE).filter(([key]) => /[:*]/.test(key));
    const ids = fc.sample(hostileId, { seed: SEED, numRuns: runs(300) });
    for (let i = 0; i < ids.length; i++) {
      const [key, rule] = routes[i % routes.length] as [string, (typeof ACCESS_TABLE)[string]];
      const [method, route] = key.split(' ') as [string, string];
      const credential = credentialFor(rule, ctx);
      // One parameter (a DELETE: all of them, so it can name nothing real) gets the hostile id, the others real ids.
      const params = route.match(/[:*][a-z_]+/g) ?? [];
      const hostile = method === 'DELETE' ? params : [params[Math.floor(i / routes.length) % params.length] as string];
      const path = fill(
        route.replace(/[:*][a-z_]+/g, (p) => (hostile.includes(p) ? (ids[i] as string) : p)),
        ctx,
      );
      // `[{}]` is no JSON route's valid body (uploads take any bytes: their success is no finding).
      const reads = method === 'GET' || method === 'HEAD';
      const kbBefore = reads ? undefined : await snapshot('kb');
      const res = await send(
        method,
        path,
        { 'content-type': 'application/json', ...(credential ? { [credential.header]: credential.value } : {}) },
        reads ? undefined : '[{}]',
      );
      if (res.status >= 500) findings.push({ what: `${key} with ${path.slice(0, 200)}`, status: res.status, sent: '', answer: res.text });
      else if (kbBefore && res.status >= 400) {
        const changed = changedParts(kbBefore, await snapshot('kb'));
        if (changed.length > 0)
          findings.push({
            what: `${key} with ${path.slice(0, 200)} (refused, changed ${changed.join(', ')})`,
            status: res.status,
            sent: '[{}]',
            answer: res.text.slice(0, 300),
          });
      }
    }
    expect(findings).toEqual([]);
  }, 300_000);

  it('hostile headers on the routes of the report', async () => {
    const findings: Finding[] = [];
    const names = [
      'X-SVC-SERVICEACCOUNT',
      'Authorization',
      'X-SVC-UAKEY',
      'content-type',
      'x-synchronous',
      'x-skip-store',
      'x-forwarded-for',
      'x-svcdb-user',
      'x-ndb-client',
      'accept',
      'content-encoding',
      'x-filename',
      'x-md5',
      'x-password',
      'x-language',
    ];
    const cases = fc.sample(
      fc.tuple(
        fc.constantFrom(...FOCUS),
        fc.uniqueArray(fc.tuple(fc.constantFrom(...names), headerValue), {
          minLength: 1,
          maxLength: 3,
          selector: ([n]) => n.toLowerCase(),
        }),
      ),
      { seed: SEED, numRuns: runs(100) },
    );
    for (const [key, extra] of cases) {
      const [method, route] = key.split(' ') as [string, string];
      const headers: Record<string, string> = { 'content-type': 'application/json', [ctx.api.header]: ctx.api.value };
      for (const [n, v] of extra) headers[n] = v;
      const body = JSON.stringify(VALID[key]?.(ctx) ?? {});
      const before = READS.test(key) ? undefined : await snapshot('kb');
      const res = await send(method, fill(route, ctx), headers, body);
      if (res.status >= 500)
        findings.push({
          what: `${key} with ${JSON.stringify(extra).slice(0, 200)}`,
          status: res.status,
          sent: body.slice(0, 100),
          answer: res.text,
        });
      else if (before && res.status >= 400 && changedParts(before, await snapshot('kb')).length > 0)
        findings.push({ what: `${key} (refused, changed the KB)`, status: res.status, sent: JSON.stringify(extra), answer: res.text });
    }
    expect(findings).toEqual([]);
  }, 300_000);
});
