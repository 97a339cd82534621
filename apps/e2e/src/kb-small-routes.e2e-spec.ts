import { randomUUID } from 'node:crypto';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Issue = { loc: (string | number)[]; msg: string; type: string };
type Zone = { id: string; slug: string; title: string; subdomain: string };
type Paragraphs = { results: { rid: string; field_type: string; field: string; text: string }[]; total: number };
type ResourceSearch = { sentences: unknown; paragraphs: Paragraphs | null; relations: unknown; nodes: null; shards: null };

const PASSWORD = 'a long enough password';

/**
 * The smaller routes of issue 20 over HTTP (standalone): resource-scoped search, and the global
 * routes the reference clients call at sign-in and in account screens — good paths, other tenants,
 * members without roles, keys, and bad input.
 */
describe('resource search and account screens', () => {
  let topology: Topology;
  let http: HttpClient;
  let admin: NonNullable<Credential>;
  let adminId: string;
  let accountA: string;
  let kb: string;
  let otherKb: string;
  let zone: string;
  let reader: NonNullable<Credential>;
  let otherKey: NonNullable<Credential>;
  let ua: NonNullable<Credential>;
  let bob: NonNullable<Credential>;
  let accountB: string;
  let dave: NonNullable<Credential>;
  let daveId: string;
  let rid: string;
  let otherRid: string;
  const run = Date.now().toString(36);
  const loc = (body: unknown) => [...new Set((body as { detail: Issue[] }).detail.map((d) => d.loc.join('.')))].sort();

  const signUp = async (name: string) => {
    const res = await http.call<{ token: string; user_id: string }>('POST', '/api/v1/auth/signup', {
      body: { email: `${name}-${run}@example.com`, password: PASSWORD },
    });
    expect(res.status).toBe(201);
    return { credential: bearer(res.body.token), userId: res.body.user_id };
  };
  const key = async (kbid: string, role: string) => {
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kb/${kbid}/service_accounts`, {
      credential: admin,
      body: { role },
    });
    const k = await http.call<{ token: string }>('POST', `/api/v1/account/${accountA}/kb/${kbid}/service_account/${sa.body.id}/keys`, {
      credential: admin,
      body: { expires: new Date(Date.now() + 3600_000).toISOString() },
    });
    return apiKey(k.body.token);
  };

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    admin = bearer(boot.personal_access_token.token);
    accountA = boot.account.id;
    adminId = (await http.call<{ id: string }[]>('GET', `/api/v1/account/${accountA}/users`, { credential: admin })).body[0]?.id as string;
    kb = (await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kbs`, { credential: admin, body: { slug: `small-${run}` } }))
      .body.id;
    otherKb = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kbs`, {
        credential: admin,
        body: { slug: `small-other-${run}` },
      })
    ).body.id;
    zone = (await http.call<{ zone: string }>('GET', `/api/v1/account/${accountA}/kb/${kb}`, { credential: admin })).body.zone;
    reader = await key(kb, 'SMEMBER');
    otherKey = await key(otherKb, 'SOWNER');
    const client = await http.call<{ token: string }>('POST', `/api/v1/account/${accountA}/nua_clients`, {
      credential: admin,
      body: { contact: 'ops@example.com' },
    });
    ua = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };
    bob = (await signUp('bob')).credential;
    accountB = (
      await http.call<{ id: string }>('POST', '/api/v1/accounts', { credential: bob, body: { slug: `bob-${run}`, title: 'Bob' } })
    ).body.id;
    const d = await signUp('dave');
    dave = d.credential;
    daveId = d.userId;
    expect(
      (
        await http.call('PATCH', `/api/v1/account/${accountA}/users`, {
          credential: admin,
          body: { add: [{ id: daveId, role: 'AMEMBER' }] },
        })
      ).status,
    ).toBeLessThan(300);

    const create = async (title: string, texts: Record<string, string>) =>
      (
        await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
          credential: admin,
          body: { title, texts: Object.fromEntries(Object.entries(texts).map(([k, body]) => [k, { body }])) },
        })
      ).body.uuid;
    rid = await create('Volcanoes', { intro: 'Lava flows from the volcano crater.', more: 'The volcano erupted twice, lava everywhere.' });
    otherRid = await create('Cooking', { body: 'Lava cake with a molten volcano centre.' });
    await http.eventually(
      async () => {
        const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: admin,
        });
        return list.body.resources.length === 2 && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      60_000,
      'both resources processed',
    );
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  describe('GET /kb/{kbid}/resource/{rid}/search', () => {
    it('searches the one resource: its paragraphs only, ResourceSearchResults shape', async () => {
      const res = await http.call<ResourceSearch>('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava%20volcano`, {
        credential: reader,
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['nodes', 'paragraphs', 'relations', 'sentences', 'shards']);
      const results = res.body.paragraphs?.results ?? [];
      expect(results.length).toBeGreaterThanOrEqual(2);
      expect(new Set(results.map((r) => r.rid))).toEqual(new Set([rid]));
      // Its two text fields and its title ("Volcanoes").
      expect(new Set(results.map((r) => `${r.field_type}/${r.field}`))).toEqual(new Set(['t/intro', 't/more', 'a/title']));
      // The KB search finds the other resource too: the scope is what the route adds.
      const all = await http.call<{ paragraphs: Paragraphs }>('GET', `/api/v1/kb/${kb}/search?query=lava%20volcano&features=keyword`, {
        credential: reader,
      });
      expect(all.body.paragraphs.results.map((r) => r.rid)).toContain(otherRid);
    });

    it('pages with page_size and page_number, and filters by field', async () => {
      const first = await http.call<ResourceSearch>('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava&page_size=1`, {
        credential: reader,
      });
      expect(first.status).toBe(200);
      expect(first.body.paragraphs?.results).toHaveLength(1);
      const second = await http.call<ResourceSearch>(
        'GET',
        `/api/v1/kb/${kb}/resource/${rid}/search?query=lava&page_size=1&page_number=1`,
        { credential: reader },
      );
      expect(second.body.paragraphs?.results).toHaveLength(1);
      expect(second.body.paragraphs?.results[0]?.field).not.toBe(first.body.paragraphs?.results[0]?.field);
      const field = await http.call<ResourceSearch>('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava&fields=t/more`, {
        credential: reader,
      });
      expect(field.body.paragraphs?.results.map((r) => r.field)).toEqual(['more']);
    });

    it("404 for a resource the KB does not hold (another KB's too), 403/401 for the wrong callers, 422 for bad input", async () => {
      expect((await http.call('GET', `/api/v1/kb/${kb}/resource/${randomUUID()}/search?query=lava`, { credential: reader })).status).toBe(
        404,
      );
      expect((await http.call('GET', `/api/v1/kb/${otherKb}/resource/${rid}/search?query=lava`, { credential: admin })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava`, { credential: otherKey })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava`, { credential: ua })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava`, { credential: bob })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava`)).status).toBe(401);
      const filters = await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava&resource_filters=${otherRid}`, {
        credential: reader,
      });
      expect([filters.status, loc(filters.body)]).toEqual([422, ['query.resource_filters']]);
      const bad = await http.call('GET', `/api/v1/kb/${kb}/resource/${rid}/search?query=lava&page_size=-3&top_k=x`, { credential: reader });
      expect(bad.status).toBe(422);
    });
  });

  describe('global routes of the account screens', () => {
    it("GET /user/welcome is the signed-in user's profile; users only", async () => {
      const welcome = await http.call<{ preferences: { email: string }; accounts: string[] }>('GET', '/api/v1/user/welcome', {
        credential: dave,
      });
      expect(welcome.status).toBe(200);
      expect(welcome.body).toEqual((await http.call('GET', '/api/v1/user', { credential: dave })).body);
      expect(welcome.body.preferences.email).toBe(`dave-${run}@example.com`);
      const slugA = (await http.call<{ slug: string }>('GET', `/api/v1/account/${accountA}`, { credential: admin })).body.slug;
      expect(welcome.body.accounts).toContain(slugA);
      expect((await http.call('GET', '/api/v1/user/welcome', { credential: reader })).status).toBe(403);
      expect((await http.call('GET', '/api/v1/user/welcome')).status).toBe(401);
    });

    it('GET /zones lists the zone KBs live in; users and API keys, not UA keys', async () => {
      for (const credential of [bob, reader]) {
        const res = await http.call<Zone[]>('GET', '/api/v1/zones', { credential });
        expect(res.status).toBe(200);
        expect(res.body).toContainEqual({ id: zone, slug: zone, title: zone, subdomain: zone });
      }
      expect((await http.call('GET', '/api/v1/zones', { credential: ua })).status).toBe(403);
      expect((await http.call('GET', '/api/v1/zones')).status).toBe(401);
    });

    it('GET /account/{id}/zones, /status, /permissions for members; other tenants refused', async () => {
      const zones = await http.call<Zone[]>('GET', `/api/v1/account/${accountA}/zones`, { credential: dave });
      expect([zones.status, zones.body.map((z) => z.id)]).toEqual([200, [zone]]);
      expect((await http.call('GET', `/api/v1/account/${accountA}/status`, { credential: dave })).body).toEqual({ available: true });
      expect((await http.call('GET', `/api/v1/account/${accountA}/permissions`, { credential: admin })).body).toEqual({
        account_id: accountA,
        role: 'AOWNER',
        can_manage_account: true,
      });
      expect((await http.call('GET', `/api/v1/account/${accountA}/permissions`, { credential: dave })).body).toEqual({
        account_id: accountA,
        role: 'AMEMBER',
        can_manage_account: false,
      });
      // By slug too: the answer names the account's id.
      const slug = (await http.call<{ slug: string }>('GET', `/api/v1/account/${accountB}`, { credential: bob })).body.slug;
      expect((await http.call('GET', `/api/v1/account/${slug}/permissions`, { credential: bob })).body).toEqual({
        account_id: accountB,
        role: 'AOWNER',
        can_manage_account: true,
      });
      for (const route of ['zones', 'status', 'permissions', 'index/kbs', `user/${adminId}`]) {
        const foreign = await http.call('GET', `/api/v1/account/${accountA}/${route}`, { credential: bob });
        expect([route, foreign.status]).toEqual([route, 403]);
        expect([route, (await http.call('GET', `/api/v1/account/${accountA}/${route}`, { credential: reader })).status]).toEqual([
          route,
          403,
        ]);
        expect([route, (await http.call('GET', `/api/v1/account/${randomUUID()}/${route}`, { credential: bob })).status]).toEqual([
          route,
          404,
        ]);
      }
    });

    it('GET /account/{id}/kb/{kb}/permissions: the KB role and the route roles it grants', async () => {
      const owner = await http.call('GET', `/api/v1/account/${accountA}/kb/${kb}/permissions`, { credential: admin });
      expect(owner.body).toEqual({ account_id: accountA, kb_id: kb, role: 'SOWNER', permissions: ['READER', 'WRITER', 'MANAGER'] });
      const key = await http.call('GET', `/api/v1/account/${accountA}/kb/${kb}/permissions`, { credential: reader });
      expect(key.body).toEqual({ account_id: accountA, kb_id: kb, role: 'SMEMBER', permissions: ['READER'] });
      expect((await http.call('GET', `/api/v1/account/${accountA}/kb/${kb}/permissions`, { credential: dave })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/account/${accountA}/kb/${kb}/permissions`, { credential: bob })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/account/${accountA}/kb/${kb}/permissions`, { credential: otherKey })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/account/${accountB}/kb/${kb}/permissions`, { credential: admin })).status).toBe(404);
    });

    it('GET /account/{id}/index/kbs: where each KB the caller sees lives', async () => {
      const index = await http.call<{ account_id: string; kb_id: string; zone_id: string }[]>(
        'GET',
        `/api/v1/account/${accountA}/index/kbs`,
        { credential: admin },
      );
      expect(index.status).toBe(200);
      expect(index.body).toContainEqual({ account_id: accountA, kb_id: kb, zone_id: zone });
      expect(index.body).toContainEqual({ account_id: accountA, kb_id: otherKb, zone_id: zone });
      // A member with no KB role sees none of them.
      expect((await http.call('GET', `/api/v1/account/${accountA}/index/kbs`, { credential: dave })).body).toEqual([]);
    });

    it('GET /account/{id}/user/{user_id}: one user of the account, 404 for anyone else', async () => {
      const res = await http.call('GET', `/api/v1/account/${accountA}/user/${daveId}`, { credential: admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: daveId, email: `dave-${run}@example.com`, role: 'AMEMBER' });
      const bobId = (await http.call<{ id: string }[]>('GET', `/api/v1/account/${accountB}/users`, { credential: bob })).body[0]
        ?.id as string;
      expect((await http.call('GET', `/api/v1/account/${accountA}/user/${bobId}`, { credential: admin })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/account/${accountA}/user/${randomUUID()}`, { credential: dave })).status).toBe(404);
    });
  });

  describe("the understanding API's and the database's paths of the learning schema and model configuration", () => {
    it("GET /schema and /nua/schema are the creation schema; GET /schema/{kbid} the KB's", async () => {
      const creation = await http.call('GET', '/api/v1/learning/configuration/schema');
      expect(creation.status).toBe(200);
      for (const path of ['/api/v1/schema', '/api/v1/nua/schema'])
        expect(await http.call('GET', path)).toMatchObject({ status: 200, body: creation.body });
      const kbSchema = await http.call('GET', `/api/v1/kb/${kb}/schema`, { credential: reader });
      expect(await http.call('GET', `/api/v1/schema/${kb}`, { credential: reader })).toMatchObject({ status: 200, body: kbSchema.body });
      expect((await http.call('GET', `/api/v1/schema/${kb}`, { credential: otherKey })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/schema/${kb}`, { credential: bob })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/schema/${kb}`)).status).toBe(401);
    });

    it("GET|POST|PATCH /config/{kbid}: the KB's configuration, changes answered with it (200)", async () => {
      const config = await http.call<Record<string, unknown>>('GET', `/api/v1/config/${kb}`, { credential: reader });
      expect(config.status).toBe(200);
      expect(config.body).toEqual((await http.call('GET', `/api/v1/kb/${kb}/configuration`, { credential: reader })).body);
      const patched = await http.call<Record<string, unknown>>('PATCH', `/api/v1/config/${kb}`, {
        credential: admin,
        body: { summary: 'extended' },
      });
      expect(patched.status).toBe(200);
      expect(patched.body['summary']).toBe('extended');
      expect(
        (await http.call<Record<string, unknown>>('GET', `/api/v1/kb/${kb}/configuration`, { credential: reader })).body['summary'],
      ).toBe('extended');
      const posted = await http.call<Record<string, unknown>>('POST', `/api/v1/config/${kb}`, {
        credential: admin,
        body: { summary: 'simple' },
      });
      expect([posted.status, posted.body['summary']]).toEqual([200, 'simple']);
      expect((await http.call('PATCH', `/api/v1/config/${kb}`, { credential: reader, body: { summary: 'extended' } })).status).toBe(403);
      expect((await http.call('PATCH', `/api/v1/config/${kb}`, { credential: bob, body: { summary: 'extended' } })).status).toBe(404);
      const bad = await http.call('PATCH', `/api/v1/config/${kb}`, { credential: admin, body: [] });
      expect([bad.status, loc(bad.body)]).toEqual([422, ['body']]);
      expect((await http.call<Record<string, unknown>>('GET', `/api/v1/config/${kb}`, { credential: reader })).body['summary']).toBe(
        'simple',
      );
    });

    it('POST /models/{kbid} and DELETE /account/{id}/models/{kbid}/{model_id}: the paths of adding and removing a semantic model', async () => {
      const { vectorsets } = (
        await http.call<{ vectorsets: { id: string; default: boolean }[] }>('GET', `/api/v1/kb/${kb}/vectorsets`, { credential: admin })
      ).body;
      const current = vectorsets.find((v) => v.default)?.id as string;
      // Adding the model the KB has changes nothing: 200 null.
      const added = await http.call('POST', `/api/v1/models/${kb}`, { credential: admin, body: { id: current } });
      expect([added.status, added.body]).toEqual([200, null]);
      expect((await http.call('GET', `/api/v1/kb/${kb}/vectorsets`, { credential: admin })).body).toEqual({ vectorsets });
      const missing = await http.call('POST', `/api/v1/models/${kb}`, { credential: admin, body: {} });
      expect([missing.status, loc(missing.body)]).toEqual([422, ['body.id']]);
      expect((await http.call('POST', `/api/v1/models/${kb}`, { credential: reader, body: { id: current } })).status).toBe(403);
      // The default model cannot go (409); a model the KB lacks is a 404; roles as on the account path.
      expect((await http.call('DELETE', `/api/v1/account/${accountA}/models/${kb}/${current}`, { credential: admin })).status).toBe(409);
      expect((await http.call('DELETE', `/api/v1/account/${accountA}/models/${kb}/no-such-model`, { credential: admin })).status).toBe(404);
      expect((await http.call('DELETE', `/api/v1/account/${accountA}/models/${kb}/${current}`, { credential: dave })).status).toBe(403);
      expect((await http.call('DELETE', `/api/v1/account/${accountB}/models/${kb}/${current}`, { credential: admin })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/${kb}/vectorsets`, { credential: admin })).body).toEqual({ vectorsets });
    });
  });
});
