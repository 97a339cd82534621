import { randomUUID } from 'node:crypto';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Issue = { loc: (string | number)[]; msg: string; type: string };
type KbRecord = { uuid: string; id: string; slug: string; account_id: string; title: string; admin: boolean; contrib: boolean };
type KbList = { kbs: { uuid: string; id: string; slug: string; account_id: string; role_on_kb: string }[] };
type Counters = { resources: number; paragraphs: number; fields: number; sentences: number; shards: null; index_size: number };

const MISSING = '00000000-0000-4000-8000-000000000000';
const PASSWORD = 'a long enough password';

/**
 * The standalone KB routes (`/api/v1/kbs`, `/api/v1/kb/{kbid}`, `/api/v1/kb/s/{slug}`) and the KB
 * counters, over HTTP: the good paths, and every way a caller might reach a KB that is not theirs.
 * Tenants: the bootstrap administrator (account A), Bob (his own account B), Carol (no account),
 * Dave (a plain member of A, no KB role).
 */
describe('standalone KB routes', () => {
  let topology: Topology;
  let http: HttpClient;
  let admin: NonNullable<Credential>;
  let accountA: string;
  let kbA: string;
  let kbASlug: string;
  let bob: NonNullable<Credential>;
  let accountB: string;
  let carol: NonNullable<Credential>;
  let dave: NonNullable<Credential>;
  const keys: Record<'reader' | 'writer' | 'manager', NonNullable<Credential>> = {} as never;
  let ua: NonNullable<Credential>;
  const run = Date.now().toString(36);

  const signUp = async (name: string): Promise<{ credential: NonNullable<Credential>; userId: string }> => {
    const res = await http.call<{ token: string; user_id: string }>('POST', '/api/v1/auth/signup', {
      body: { email: `${name}-${run}@example.com`, password: PASSWORD },
    });
    expect(res.status).toBe(201);
    return { credential: bearer(res.body.token), userId: res.body.user_id };
  };
  /** The members a 422 names (a member may fail several checks). */
  const issues = (body: unknown) => [...new Set((body as { detail: Issue[] }).detail.map((d) => d.loc.join('.')))].sort();

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    admin = bearer(boot.personal_access_token.token);
    accountA = boot.account.id;
    kbA = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kbs`, {
        credential: admin,
        body: { slug: `a-docs-${run}`, title: 'A docs' },
      })
    ).body.id;
    kbASlug = `a-docs-${run}`;
    for (const [name, role] of [
      ['reader', 'SMEMBER'],
      ['writer', 'SCONTRIBUTOR'],
      ['manager', 'SOWNER'],
    ] as const) {
      const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kb/${kbA}/service_accounts`, {
        credential: admin,
        body: { role },
      });
      const key = await http.call<{ token: string }>('POST', `/api/v1/account/${accountA}/kb/${kbA}/service_account/${sa.body.id}/keys`, {
        credential: admin,
        body: { expires: new Date(Date.now() + 3600_000).toISOString() },
      });
      keys[name] = apiKey(key.body.token);
    }
    const client = await http.call<{ token: string }>('POST', `/api/v1/account/${accountA}/nua_clients`, {
      credential: admin,
      body: { contact: 'ops@example.com' },
    });
    ua = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };

    bob = (await signUp('bob')).credential;
    accountB = (
      await http.call<{ id: string }>('POST', '/api/v1/accounts', { credential: bob, body: { slug: `bob-${run}`, title: 'Bob' } })
    ).body.id;
    carol = (await signUp('carol')).credential;
    const d = await signUp('dave');
    dave = d.credential;
    const added = await http.call('PATCH', `/api/v1/account/${accountA}/users`, {
      credential: admin,
      body: { add: [{ id: d.userId, role: 'AMEMBER' }] },
    });
    // 200 with a JSON null body, like the spec's other "null body" routes.
    expect([added.status, added.headers.get('content-type'), added.body]).toEqual([200, 'application/json; charset=utf-8', null]);
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  describe('POST /api/v1/kbs', () => {
    it('creates the KB in the one account the caller owns: 201 {uuid, slug}, and the caller manages it', async () => {
      const res = await http.call<{ uuid: string; slug: string }>('POST', '/api/v1/kbs', {
        credential: bob,
        body: { slug: 'bob-docs', title: 'Bob docs' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ uuid: expect.any(String), slug: 'bob-docs' });
      const kb = await http.call<KbRecord>('GET', `/api/v1/kb/${res.body.uuid}`, { credential: bob });
      expect(kb.status).toBe(200);
      expect(kb.body).toMatchObject({
        uuid: res.body.uuid,
        id: res.body.uuid,
        slug: 'bob-docs',
        account_id: accountB,
        title: 'Bob docs',
        admin: true,
        contrib: true,
      });
    });

    it('without a slug, the id is the slug (as on the account path)', async () => {
      const res = await http.call<{ uuid: string; slug: string }>('POST', '/api/v1/kbs', { credential: bob, body: { title: 'No slug' } });
      expect(res.status).toBe(201);
      expect(res.body.slug).toBe(res.body.uuid);
    });

    it('asks for account_id (422) when the caller owns no account, or several; creates in the one named', async () => {
      const none = await http.call('POST', '/api/v1/kbs', { credential: carol, body: { slug: 'x' } });
      expect(none.status).toBe(422);
      expect(issues(none.body)).toEqual(['body.account_id']);

      const second = await http.call<{ id: string }>('POST', '/api/v1/accounts', {
        credential: bob,
        body: { slug: `bob-two-${run}`, title: 'Bob 2' },
      });
      const several = await http.call('POST', '/api/v1/kbs', { credential: bob, body: { slug: 'bob-docs' } });
      expect(several.status).toBe(422);
      expect(issues(several.body)).toEqual(['body.account_id']);
      // By slug; the same KB slug in another account is allowed.
      const named = await http.call<{ uuid: string }>('POST', '/api/v1/kbs', {
        credential: bob,
        body: { slug: 'bob-docs', account_id: `bob-two-${run}` },
      });
      expect(named.status).toBe(201);
      expect((await http.call<KbRecord>('GET', `/api/v1/kb/${named.body.uuid}`, { credential: bob })).body.account_id).toBe(second.body.id);
    });

    it("refuses another tenant's account exactly as a missing one (404), and a mere member (403)", async () => {
      const foreign = await http.call('POST', '/api/v1/kbs', { credential: carol, body: { slug: 'sneaky', account_id: accountA } });
      const missing = await http.call('POST', '/api/v1/kbs', { credential: carol, body: { slug: 'sneaky', account_id: MISSING } });
      const missingSlug = await http.call('POST', '/api/v1/kbs', {
        credential: carol,
        body: { slug: 'sneaky', account_id: 'no-such-account' },
      });
      expect([foreign.status, missing.status, missingSlug.status]).toEqual([404, 404, 404]);
      expect(foreign.body).toEqual(missing.body);
      expect(missingSlug.body).toEqual(missing.body);
      const member = await http.call<{ detail: string }>('POST', '/api/v1/kbs', {
        credential: dave,
        body: { slug: 'sneaky', account_id: accountA },
      });
      expect(member.status).toBe(403);
      expect(member.body.detail).toMatch(/AOWNER/);
      const kbs = await http.call<{ slug: string }[]>('GET', `/api/v1/account/${accountA}/kbs`, { credential: admin });
      expect(kbs.body.map((k) => k.slug)).not.toContain('sneaky');
    });

    it('is for users: every API key (even Manager) and UA key gets 403', async () => {
      for (const credential of [keys.manager, keys.reader, ua]) {
        expect((await http.call('POST', '/api/v1/kbs', { credential, body: { slug: 'by-key' } })).status).toBe(403);
      }
    });

    it('lists every invalid member of a bad body in one 422', async () => {
      const res = await http.call('POST', '/api/v1/kbs', {
        credential: bob,
        body: { slug: 'bad slug!', title: 5, allowed_origins: 'x', account_id: 7 },
      });
      expect(res.status).toBe(422);
      expect(issues(res.body)).toEqual(['body.account_id', 'body.allowed_origins', 'body.slug', 'body.title']);
      expect((await http.call('POST', '/api/v1/kbs', { credential: bob, body: [] })).status).toBe(422);
    });

    it('a taken slug in the account is a 409', async () => {
      const res = await http.call<{ detail: string }>('POST', '/api/v1/kbs', {
        credential: admin,
        body: { slug: kbASlug, account_id: accountA },
      });
      expect(res.status).toBe(409);
      expect(typeof res.body.detail).toBe('string');
    });
  });

  describe('GET /api/v1/kbs', () => {
    it("lists a user's KBs across their accounts, and nobody else's", async () => {
      const mine = await http.call<KbList>('GET', '/api/v1/kbs', { credential: bob });
      expect(mine.status).toBe(200);
      expect(mine.body.kbs.length).toBeGreaterThanOrEqual(3);
      expect(mine.body.kbs.every((k) => k.uuid === k.id && k.role_on_kb === 'SOWNER' && k.account_id !== accountA)).toBe(true);
      const theirs = await http.call<KbList>('GET', '/api/v1/kbs', { credential: admin });
      expect(theirs.body.kbs.map((k) => k.id)).toContain(kbA);
      expect(theirs.body.kbs.some((k) => mine.body.kbs.some((m) => m.id === k.id))).toBe(false);
    });

    it('an API key sees only its own KB; a user with no account or no KB role sees none', async () => {
      for (const credential of [keys.reader, keys.manager]) {
        const res = await http.call<KbList>('GET', '/api/v1/kbs', { credential });
        expect(res.status).toBe(200);
        expect(res.body.kbs.map((k) => k.id)).toEqual([kbA]);
      }
      expect((await http.call<KbList>('GET', '/api/v1/kbs', { credential: keys.reader })).body.kbs[0]?.role_on_kb).toBe('SMEMBER');
      expect((await http.call<KbList>('GET', '/api/v1/kbs', { credential: carol })).body).toEqual({ kbs: [] });
      expect((await http.call<KbList>('GET', '/api/v1/kbs', { credential: dave })).body).toEqual({ kbs: [] });
    });

    it('refuses a UA key (403) and no credential (401)', async () => {
      expect((await http.call('GET', '/api/v1/kbs', { credential: ua })).status).toBe(403);
      expect((await http.call('GET', '/api/v1/kbs')).status).toBe(401);
    });
  });

  describe('GET /api/v1/kb/s/{slug}', () => {
    it('finds a KB by slug among those the caller can see', async () => {
      const res = await http.call<KbRecord>('GET', `/api/v1/kb/s/${kbASlug}`, { credential: admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ uuid: kbA, id: kbA, slug: kbASlug, account_id: accountA, admin: true });
      const byKey = await http.call<KbRecord>('GET', `/api/v1/kb/s/${kbASlug}`, { credential: keys.reader });
      expect(byKey.status).toBe(200);
      expect(byKey.body).toMatchObject({ id: kbA, admin: false, contrib: false });
    });

    it("never finds another tenant's slug (404 like a missing one); a key finds only its KB's slug", async () => {
      const foreign = await http.call('GET', '/api/v1/kb/s/bob-docs', { credential: admin });
      const missing = await http.call('GET', `/api/v1/kb/s/no-such-kb-${run}`, { credential: admin });
      expect([foreign.status, missing.status]).toEqual([404, 404]);
      expect(foreign.body).toEqual(missing.body);
      expect((await http.call('GET', '/api/v1/kb/s/bob-docs', { credential: keys.manager })).status).toBe(404);
      expect((await http.call('GET', '/api/v1/kb/s/bob-docs', { credential: dave })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/s/${kbASlug}`, { credential: dave })).status).toBe(404);
    });

    it("a slug two of the caller's accounts share is a 409, not a guess", async () => {
      const res = await http.call<{ detail: string }>('GET', '/api/v1/kb/s/bob-docs', { credential: bob });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/bob-docs/);
    });

    it('a slug that is also a route name under /kb/{kbid} is still a slug', async () => {
      const created = await http.call<{ uuid: string }>('POST', '/api/v1/kbs', {
        credential: admin,
        body: { slug: 'resources', account_id: accountA },
      });
      expect(created.status).toBe(201);
      const res = await http.call<KbRecord>('GET', '/api/v1/kb/s/resources', { credential: admin });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(created.body.uuid);
      expect((await http.call('DELETE', `/api/v1/kb/${created.body.uuid}`, { credential: admin })).status).toBe(204);
    });

    it('a slug no KB can have is a 422 naming it', async () => {
      const res = await http.call('GET', `/api/v1/kb/s/${encodeURIComponent('a b/../c')}`, { credential: admin });
      expect(res.status).toBe(422);
      expect(issues(res.body)).toEqual(['path.slug']);
    });
  });

  describe('GET, PATCH, DELETE /api/v1/kb/{kbid}', () => {
    let bobKb: string;
    beforeAll(async () => {
      bobKb = (
        await http.call<{ uuid: string }>('POST', '/api/v1/kbs', {
          credential: bob,
          body: { slug: `bob-private-${run}`, title: 'Private', account_id: accountB },
        })
      ).body.uuid;
    });

    it("reads the KB record with the caller's rights: users and the KB's own keys", async () => {
      const byKey = await http.call<KbRecord>('GET', `/api/v1/kb/${kbA}`, { credential: keys.writer });
      expect(byKey.status).toBe(200);
      expect(byKey.body).toMatchObject({ uuid: kbA, account_id: accountA, admin: false, contrib: true });
      expect((await http.call<KbRecord>('GET', `/api/v1/kb/${kbA}`, { credential: admin })).body).toMatchObject({
        admin: true,
        contrib: true,
      });
    });

    it("another tenant's KB answers exactly as a missing one: 404 on every method, nothing changed", async () => {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { title: 'Owned' }],
        ['DELETE', undefined],
      ] as const) {
        const foreign = await http.call(method, `/api/v1/kb/${bobKb}`, { credential: admin, body });
        const missing = await http.call(method, `/api/v1/kb/${MISSING}`, { credential: admin, body });
        expect([method, foreign.status, missing.status]).toEqual([method, 404, 404]);
        expect(foreign.body).toEqual(missing.body);
      }
      // The same on the account path and on the KB's content routes: the id's existence does not leak.
      expect((await http.call('GET', `/api/v1/account/${accountA}/kb/${bobKb}`, { credential: admin })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/${bobKb}/resources`, { credential: carol })).status).toBe(404);
      // A key gets 403 for every KB but its own, existing or not.
      const foreignByKey = await http.call('GET', `/api/v1/kb/${bobKb}`, { credential: keys.manager });
      const missingByKey = await http.call('GET', `/api/v1/kb/${MISSING}`, { credential: keys.manager });
      expect([foreignByKey.status, missingByKey.status]).toEqual([403, 403]);
      expect(foreignByKey.body).toEqual(missingByKey.body);
      expect((await http.call<KbRecord>('GET', `/api/v1/kb/${bobKb}`, { credential: bob })).body.title).toBe('Private');
    });

    it('a member of the account without a KB role is refused with 403 (the KB is in their tenant)', async () => {
      expect((await http.call('GET', `/api/v1/kb/${kbA}`, { credential: dave })).status).toBe(403);
    });

    it('a KB id that is not a uuid is a 422 naming it', async () => {
      const res = await http.call('GET', '/api/v1/kb/not-a-uuid', { credential: admin });
      expect(res.status).toBe(422);
      expect(issues(res.body)).toEqual(['path.kbid']);
    });

    it('PATCH needs the Manager role: 200 {uuid, slug} and the change is read back', async () => {
      for (const credential of [keys.reader, keys.writer]) {
        expect((await http.call('PATCH', `/api/v1/kb/${kbA}`, { credential, body: { title: 'Nope' } })).status).toBe(403);
      }
      const res = await http.call('PATCH', `/api/v1/kb/${kbA}`, {
        credential: keys.manager,
        body: { title: 'Renamed by key', description: 'd' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ uuid: kbA, slug: kbASlug });
      expect((await http.call<KbRecord>('GET', `/api/v1/kb/${kbA}`, { credential: admin })).body.title).toBe('Renamed by key');
      const renamed = await http.call('PATCH', `/api/v1/kb/${bobKb}`, { credential: bob, body: { slug: `bob-renamed-${run}` } });
      expect(renamed.body).toEqual({ uuid: bobKb, slug: `bob-renamed-${run}` });
    });

    it('PATCH with a bad body lists every invalid member (422); a taken slug is a 409', async () => {
      const res = await http.call('PATCH', `/api/v1/kb/${kbA}`, {
        credential: admin,
        body: { state: 'NOPE', slug: 'bad slug', allowed_origins: [1] },
      });
      expect(res.status).toBe(422);
      expect(issues(res.body)).toEqual(['body.allowed_origins', 'body.slug', 'body.state']);
      const other = (
        await http.call<{ id: string }>('POST', `/api/v1/account/${accountA}/kbs`, { credential: admin, body: { slug: `a-other-${run}` } })
      ).body.id;
      expect((await http.call('PATCH', `/api/v1/kb/${other}`, { credential: admin, body: { slug: kbASlug } })).status).toBe(409);
    });

    it('DELETE is for users with the Manager role; the KB is gone everywhere afterwards', async () => {
      expect((await http.call('DELETE', `/api/v1/kb/${kbA}`, { credential: keys.manager })).status).toBe(403);
      expect((await http.call('DELETE', `/api/v1/kb/${bobKb}`, { credential: bob })).status).toBe(204);
      expect((await http.call('GET', `/api/v1/kb/${bobKb}`, { credential: bob })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/s/bob-renamed-${run}`, { credential: bob })).status).toBe(404);
      expect((await http.call<KbList>('GET', '/api/v1/kbs', { credential: bob })).body.kbs.map((k) => k.id)).not.toContain(bobKb);
    });
  });

  describe('GET /api/v1/kb/{kbid}/counters', () => {
    it('an empty KB counts zero', async () => {
      const empty = (
        await http.call<{ uuid: string }>('POST', '/api/v1/kbs', {
          credential: admin,
          body: { slug: `empty-${run}`, account_id: accountA },
        })
      ).body.uuid;
      const res = await http.call<Counters>('GET', `/api/v1/kb/${empty}/counters`, { credential: admin });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ resources: 0, paragraphs: 0, fields: 0, sentences: 0, shards: null, index_size: 0 });
    });

    it('counts resources, fields, indexed paragraphs and vectors once processed (Reader role)', async () => {
      const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbA}/resources`, {
        credential: keys.writer,
        body: {
          title: 'Counting',
          texts: { a: { body: 'The sea is salty.\n\nThe mountains are high and cold.' }, b: { body: 'Another field about rivers.' } },
        },
      });
      expect(created.status).toBe(201);
      const counters = await http.eventually(
        async () => {
          const res = await http.call<Counters>('GET', `/api/v1/kb/${kbA}/counters`, { credential: keys.reader });
          expect(res.status).toBe(200);
          return res.body.paragraphs >= 3 && res.body.sentences > 0 ? res.body : undefined;
        },
        90_000,
        'the resource to be indexed',
      );
      expect(counters).toMatchObject({ resources: 1, fields: 2, shards: null });
      expect(counters.sentences).toBeLessThanOrEqual(counters.paragraphs);
      expect(counters.index_size).toBeGreaterThan(0);
    });

    it("refuses other tenants (404), other KBs' keys and UA keys (403)", async () => {
      expect((await http.call('GET', `/api/v1/kb/${kbA}/counters`, { credential: bob })).status).toBe(404);
      expect((await http.call('GET', `/api/v1/kb/${kbA}/counters`, { credential: ua })).status).toBe(403);
      const bobKey = await (async () => {
        const kb = (
          await http.call<{ uuid: string }>('POST', '/api/v1/kbs', {
            credential: bob,
            body: { slug: `bob-keyed-${run}`, account_id: accountB },
          })
        ).body.uuid;
        const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${accountB}/kb/${kb}/service_accounts`, {
          credential: bob,
          body: { role: 'SOWNER' },
        });
        const key = await http.call<{ token: string }>('POST', `/api/v1/account/${accountB}/kb/${kb}/service_account/${sa.body.id}/keys`, {
          credential: bob,
          body: { expires: new Date(Date.now() + 3600_000).toISOString() },
        });
        return apiKey(key.body.token);
      })();
      expect((await http.call('GET', `/api/v1/kb/${kbA}/counters`, { credential: bobKey })).status).toBe(403);
      expect((await http.call('GET', `/api/v1/kb/${randomUUID()}/counters`, { credential: admin })).status).toBe(404);
    });
  });
});
