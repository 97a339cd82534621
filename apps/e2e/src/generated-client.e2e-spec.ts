import { createKbClient, type KbClient, type components } from '@kb/client';
import { startStandalone, type Topology } from './support/topologies';

type AskStreamLine = components['schemas']['AskStreamLine'];

/** Polls `probe` until it returns a value (processing is asynchronous), or fails after `timeoutMs`. */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The NDJSON lines of a streamed /ask, read from the client's raw response. */
async function ndjsonLines(response: Response): Promise<AskStreamLine[]> {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AskStreamLine);
}

/**
 * A newcomer's journey through `@kb/client` only (types generated from openapi.json, calls through
 * openapi-fetch): sign in, give a KB a service account and an API key, write a text resource and a
 * file, find them with filters, ask with a streamed answer and send feedback, query the graph, mint a
 * temporal key, revoke the key.
 * Every call is typed by the document: a path, parameter or body the document does not declare
 * would not compile.
 */
describe('the generated client against a standalone service', () => {
  let topology: Topology;
  let baseUrl: string;
  let accountId: string;
  let kbid: string;
  let user: KbClient;
  let keyed: KbClient;
  let saId: string;
  let keyId: string;
  let textRid: string;
  let fileRid: string;

  beforeAll(async () => {
    topology = await startStandalone();
    baseUrl = topology.http.baseUrl;
    const boot = topology.bootstrap();
    accountId = boot.account.id;
    kbid = boot.kb.id;
    const { data, response } = await createKbClient({ baseUrl }).POST('/api/v1/auth/login', {
      body: { email: boot.user.email, password: boot.user.password },
    });
    expect(response.status).toBe(200);
    user = createKbClient({ baseUrl, token: data!.token });
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
  });

  it('gives the KB a service account with an API key, listed without its secret', async () => {
    const path = { account_id: accountId, kb_id: kbid };
    const created = await user.POST('/api/v1/account/{account_id}/kb/{kb_id}/service_accounts', {
      params: { path },
      body: { title: 'newcomer', role: 'SCONTRIBUTOR' },
    });
    expect(created.response.status).toBe(201);
    saId = created.data!.id;
    const expires = new Date(Date.now() + 24 * 3600_000).toISOString();
    const key = await user.POST('/api/v1/account/{account_id}/kb/{kb_id}/service_account/{sa_id}/keys', {
      params: { path: { ...path, sa_id: saId } },
      body: { expires },
    });
    expect(key.response.status).toBe(201);
    keyId = key.data!.id;
    keyed = createKbClient({ baseUrl, apiKey: key.data!.token });

    const listed = await user.GET('/api/v1/account/{account_id}/kb/{kb_id}/service_accounts', { params: { path } });
    expect(listed.response.status).toBe(200);
    const mine = listed.data!.find((sa) => sa.id === saId);
    expect(mine).toMatchObject({ title: 'newcomer', role: 'SCONTRIBUTOR' });
    expect(mine!.keys.map((k) => k.id)).toEqual([keyId]);
    expect(JSON.stringify(listed.data)).not.toContain(key.data!.token);

    const kb = await keyed.GET('/api/v1/kb/{kbid}', { params: { path: { kbid } } });
    expect([kb.response.status, kb.data?.uuid]).toEqual([200, kbid]);
  });

  it('changes the profile and the account: 200 with a JSON null body (the spec\'s "null body"), read as null', async () => {
    const profile = await user.PATCH('/api/v1/user', { body: { name: 'Newcomer' } });
    expect([profile.response.status, profile.response.headers.get('content-type'), profile.data]).toEqual([
      200,
      'application/json; charset=utf-8',
      null,
    ]);
    const account = await user.PATCH('/api/v1/account/{account_id}', {
      params: { path: { account_id: accountId } },
      body: { description: "A newcomer's account" },
    });
    expect([account.response.status, account.data]).toEqual([200, null]);
    const bad = await user.PATCH('/api/v1/user', { body: { email: 'not-an-address' } });
    expect(bad.response.status).toBe(422);
  });

  it('refuses a service account with an unknown role (422, the role named in the error)', async () => {
    const bad = await user.POST('/api/v1/account/{account_id}/kb/{kb_id}/service_accounts', {
      params: { path: { account_id: accountId, kb_id: kbid } },
      body: { title: 'x', role: 'SGOD' as 'SOWNER' },
    });
    expect(bad.response.status).toBe(422);
    expect(JSON.stringify(bad.error)).toContain('role');
  });

  it('creates a resource with a text field and uploads a file, then reads them back', async () => {
    const text = await keyed.POST('/api/v1/kb/{kbid}/resources', {
      params: { path: { kbid } },
      body: { title: 'Tides', slug: 'tides', texts: { body: { body: 'Spring tides follow the full and the new moon.', format: 'PLAIN' } } },
    });
    expect(text.response.status).toBe(201);
    textRid = text.data!.uuid;

    const upload = await keyed.POST('/api/v1/kb/{kbid}/upload', {
      params: { path: { kbid }, header: { 'x-filename': 'harbour.txt' } },
      headers: { 'content-type': 'text/plain' },
      body: 'Harbour pilots read the tide tables every morning.',
      bodySerializer: (body) => body,
    });
    expect(upload.response.status).toBe(201);
    fileRid = upload.data!.uuid;
    expect(upload.data!.field_id).toBeTruthy();

    const read = await keyed.GET('/api/v1/kb/{kbid}/resource/{rid}', {
      params: { path: { kbid, rid: textRid }, query: { show: ['basic', 'values'] } },
    });
    expect(read.response.status).toBe(200);
    expect(read.data).toMatchObject({ id: textRid, title: 'Tides', slug: 'tides' });
  });

  it('finds both once processed, and one of them with a filter expression', async () => {
    const find = (body: components['schemas']['FindRequest']) => keyed.POST('/api/v1/kb/{kbid}/find', { params: { path: { kbid } }, body });
    const both = await eventually(async () => {
      const { data } = await find({ query: 'tide', features: ['keyword'] });
      return data && Object.keys(data.resources).length === 2 ? data : undefined;
    }, 'both resources found');
    expect(Object.keys(both.resources).sort()).toEqual([textRid, fileRid].sort());

    const onlyFile = await find({ query: 'tide', features: ['keyword'], filter_expression: { field: { prop: 'resource', id: fileRid } } });
    expect(onlyFile.response.status).toBe(200);
    expect(Object.keys(onlyFile.data!.resources)).toEqual([fileRid]);
    const notText = await find({
      query: 'tide',
      features: ['keyword'],
      filter_expression: { field: { not: { prop: 'resource', id: fileRid } } },
    });
    expect(Object.keys(notText.data!.resources)).toEqual([textRid]);

    const bad = await find({ query: 'tide', top_k: 0 });
    expect(bad.response.status).toBe(422);
    // The error type is the union of the route's error bodies; a 422 is the validation one.
    const invalid = bad.error as components['schemas']['ValidationErrorResponse'];
    expect(invalid.detail.map((d) => d.loc.join('.'))).toEqual(['body.top_k']);
  });

  it('asks with a streamed answer: NDJSON items read from the raw response, ending with a status; then sends feedback on it', async () => {
    const { response } = await keyed.POST('/api/v1/kb/{kbid}/ask', {
      params: { path: { kbid } },
      body: { query: 'When are spring tides?', features: ['keyword'] },
      parseAs: 'stream',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = await ndjsonLines(response);
    const retrieval = lines
      .map((line) => line.item)
      .find((item): item is components['schemas']['AskRetrievalItem'] => item.type === 'retrieval');
    expect(Object.keys(retrieval!.results.resources)).toContain(textRid);
    const status = lines.map((line) => line.item).find((item): item is components['schemas']['AskStatusItem'] => item.type === 'status');
    expect(status?.status).toEqual(expect.any(String));

    const ident = response.headers.get('nuclia-learning-id')!;
    expect(ident).toBeTruthy();
    const feedback = await keyed.POST('/api/v1/kb/{kbid}/feedback', {
      params: { path: { kbid } },
      body: { ident, good: true, task: 'CHAT', feedback: 'clear' },
    });
    expect([feedback.response.status, feedback.data]).toEqual([200, {}]);
    const bad = await keyed.POST('/api/v1/kb/{kbid}/feedback', {
      params: { path: { kbid } },
      body: { ident, good: 'yes' as unknown as boolean, rating: 5 } as never,
    });
    expect(bad.response.status).toBe(422);
    expect((bad.error as { detail: { loc: string[] }[] }).detail.map((d) => d.loc.join('.'))).toEqual(['body.good', 'body.rating']);
  });

  it('queries the knowledge graph with a typed body, and gets every mistake of a bad one at its path', async () => {
    const paths = await keyed.POST('/api/v1/kb/{kbid}/graph', {
      params: { path: { kbid } },
      body: { query: { prop: 'path', source: { value: 'Moon', type: 'entity' }, undirected: true }, top_k: 10 },
    });
    expect(paths.response.status).toBe(200);
    expect(Array.isArray(paths.data!.paths)).toBe(true);
    const nodes = await keyed.POST('/api/v1/kb/{kbid}/graph/nodes', {
      params: { path: { kbid } },
      body: { query: { prop: 'node', value: 'Moon', match: 'fuzzy' } },
    });
    expect([nodes.response.status, Array.isArray(nodes.data!.nodes)]).toEqual([200, true]);
    const bad = await keyed.POST('/api/v1/kb/{kbid}/graph/relations', {
      params: { path: { kbid } },
      body: { query: { prop: 'node', value: 'Moon' }, top_k: 0 },
    });
    expect(bad.response.status).toBe(422);
    expect((bad.error as { detail: { loc: string[] }[] }).detail.map((d) => d.loc.join('.'))).toEqual(['body.top_k', 'body.query']);
  });

  it('mints a temporal key from the API key, which reads the KB as its parent key', async () => {
    const minted = await keyed.POST('/api/v1/service_account_temporal_key', { body: { ttl: 10 } });
    expect(minted.response.status).toBe(201);
    const temporal = createKbClient({ baseUrl, apiKey: minted.data!.token });
    const found = await temporal.POST('/api/v1/kb/{kbid}/find', {
      params: { path: { kbid } },
      body: { query: 'tide', features: ['keyword'] },
    });
    expect(found.response.status).toBe(200);
    const denied = await user.POST('/api/v1/service_account_temporal_key', { body: { ttl: 10 } });
    expect(denied.response.status).toBe(403);
  });

  it('revokes the key (it stops opening the KB) and deletes the service account', async () => {
    const path = { account_id: accountId, kb_id: kbid, sa_id: saId };
    const revoked = await user.DELETE('/api/v1/account/{account_id}/kb/{kb_id}/service_account/{sa_id}/key/{sa_key_id}', {
      params: { path: { ...path, sa_key_id: keyId } },
    });
    expect(revoked.response.status).toBe(204);
    const status = await eventually(
      async () => {
        const { response } = await keyed.GET('/api/v1/kb/{kbid}', { params: { path: { kbid } } });
        return response.status === 200 ? undefined : response.status;
      },
      'the revoked key refused',
      20_000,
    );
    expect(status).toBe(401);

    const deleted = await user.DELETE('/api/v1/account/{account_id}/kb/{kb_id}/service_account/{sa_id}', { params: { path } });
    expect(deleted.response.status).toBe(204);
    const listed = await user.GET('/api/v1/account/{account_id}/kb/{kb_id}/service_accounts', {
      params: { path: { account_id: accountId, kb_id: kbid } },
    });
    expect(listed.data!.map((sa) => sa.id)).not.toContain(saId);
  });
});
