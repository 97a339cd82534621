import { FIELD_TYPE, Nuclia, type IErrorResponse, type WritableKnowledgeBox } from '@nuclia/core';
import { firstValueFrom, lastValueFrom, type Observable } from 'rxjs';
import { bearer } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

/**
 * The reference system's own JS SDK (`@nuclia/core`), unmodified, against the gateway (standalone).
 * Two clients, as an application builds them: one with a user credential for the account calls
 * (a personal access token sent by the SDK's `modifyHeaders` hook, since a browser login is not
 * possible here) and one with a KB API key (`apiKey`: the SDK's `X-NUCLIA-SERVICEACCOUNT` header)
 * for the KB calls. `proxy: true` sends every call to the one backend instead of zone subdomains.
 */
describe('@nuclia/core SDK against the gateway', () => {
  let topology: Topology;
  let backend: string;
  let account: { id: string; slug: string };
  let zone: string;
  let pat: string;
  let owner: Nuclia;
  let kb: WritableKnowledgeBox;
  let kbid: string;
  let keyed: WritableKnowledgeBox;
  let key: string;
  const run = Date.now().toString(36);
  const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const isError = (v: unknown): v is IErrorResponse => (v as { type?: string } | null)?.type === 'error';
  const ok = async <T>(o: Observable<T>): Promise<T> => {
    const v = await firstValueFrom(o);
    if (isError(v)) throw new Error(`SDK call failed: ${JSON.stringify(v)}`);
    return v;
  };
  const refused = async (o: Observable<unknown>): Promise<number> => {
    try {
      await firstValueFrom(o);
    } catch (e) {
      return (e as { status: number }).status;
    }
    throw new Error('expected the call to be refused');
  };

  beforeAll(async () => {
    // The SDK logs every refused call on the console; the bad paths below are refused on purpose.
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    topology = await startStandalone();
    backend = `${topology.http.baseUrl}/api`;
    const boot = topology.bootstrap();
    pat = boot.personal_access_token.token;
    account = { id: boot.account.id, slug: boot.account.slug };
    const zones = await topology.http.call<{ slug: string }[]>('GET', '/api/v1/zones', { credential: bearer(pat) });
    zone = zones.body[0]?.slug as string;
    owner = new Nuclia({
      backend,
      zone,
      proxy: true,
      account: account.slug,
      accountId: account.id,
      client: 'e2e',
      modifyHeaders: (headers) => ({ ...headers, Authorization: `Bearer ${pat}` }),
    });
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  describe('account calls (user credential)', () => {
    it('reads the account, its status, zones, welcome and users', async () => {
      const accounts = await ok(owner.db.getAccounts());
      expect(accounts.map((a) => a.id)).toContain(account.id);
      expect((await ok(owner.db.getAccount(account.slug))).id).toBe(account.id);
      expect(await ok(owner.db.getAccountStatus(account.id))).toBeDefined();
      const welcome = await ok(owner.db.getWelcome());
      expect(welcome.accounts).toContain(account.slug);
      expect(Object.values(await ok(owner.rest.getZones()))).toContain(zone);
      const users = await ok(owner.db.getAccountUsers(account.id));
      expect(users.length).toBe(1);
      expect((await ok(owner.db.getAccountUser(account.id, users[0]!.id))).id).toBe(users[0]!.id);
    });

    it('creates a KB, reads it, lists it, modifies it', async () => {
      kb = await ok(owner.db.createKnowledgeBox(account.id, { slug: `sdk-${run}`, title: 'SDK KB' }, zone));
      kbid = kb.id;
      expect(kb.slug).toBe(`sdk-${run}`);
      expect(kb.title).toBe('SDK KB');
      const again = await ok(owner.db.getKnowledgeBox(account.id, kbid, zone));
      expect(again.id).toBe(kbid);
      const listed = await ok(owner.db.getKnowledgeBoxes(account.slug, account.id));
      expect(listed.map((k) => k.id)).toContain(kbid);
      await ok(kb.modify({ title: 'SDK KB, renamed' }));
      expect((await ok(owner.db.getKnowledgeBox(account.id, kbid, zone))).title).toBe('SDK KB, renamed');
    });

    it('creates a service account and a key, and mints an ephemeral token', async () => {
      const sa = await ok(kb.createKeyForService({ title: 'sdk', role: 'SOWNER' }, new Date(Date.now() + 3600_000).toISOString()));
      expect(sa.token).toBeTruthy();
      expect((await ok(kb.getServiceAccounts())).map((s) => s.title)).toContain('sdk');
      key = sa.token;
      const sdk = new Nuclia({ backend, zone, proxy: true, knowledgeBox: kbid, apiKey: key, client: 'e2e' });
      keyed = await ok(sdk.db.getKnowledgeBox());
      const temp = await ok(kb.getTempToken());
      expect(temp).toBeTruthy();
    });

    it('reads the KB users, configuration and learning schemas, usage, and manages NUA clients', async () => {
      const users = await ok(kb.getUsers());
      expect(users.length).toBeGreaterThanOrEqual(1);
      expect(await ok(kb.getConfiguration())).toBeDefined();
      expect(Object.keys(await ok(kb.getLearningSchema())).length).toBeGreaterThan(0);
      expect(Object.keys(await ok(owner.db.getLearningSchema(account.id, zone))).length).toBeGreaterThan(0);
      const usage = await ok(owner.db.getUsage(account.id, new Date(Date.now() - 86_400_000).toISOString(), undefined, kbid, 'day'));
      expect(Array.isArray(usage)).toBe(true);
      const client = await ok(owner.db.createNUAClient(account.id, { title: 'sdk', contact: 'ops@example.com' }, zone));
      expect(client.token).toBeTruthy();
      const clients = await ok(owner.db.getNUAClients(account.id));
      expect(clients.map((c) => c.client_id)).toContain(client.client_id);
      await ok(owner.db.deleteNUAClient(account.id, client.client_id, zone));
    });

    it('refuses the account calls without a credential', async () => {
      const anonymous = new Nuclia({ backend, zone, proxy: true, accountId: account.id, public: true });
      expect(await refused(anonymous.db.getAccountUsers(account.id))).toBe(401);
    });
  });

  describe('KB calls (API key)', () => {
    let rid: string;

    it('creates, reads, modifies and deletes a resource', async () => {
      const created = await ok(
        keyed.createResource({
          title: 'Volcanoes',
          slug: `volcanoes-${run}`,
          texts: { body: { body: 'Lava flows from the crater of a volcano.' } },
        }),
      );
      rid = created.uuid;
      expect(rid).toMatch(ID);
      const resource = await ok(keyed.getResource(rid));
      expect(resource.title).toBe('Volcanoes');
      expect((await ok(keyed.getResourceBySlug(`volcanoes-${run}`))).id).toBe(rid);
      expect(await ok(keyed.hasResource(`volcanoes-${run}`))).toBe(true);
      expect(await ok(keyed.hasResource(`missing-${run}`))).toBe(false);
      await ok(resource.modify({ title: 'Volcanoes and lava' }));
      expect((await ok(keyed.getResource(rid))).title).toBe('Volcanoes and lava');
      const full = await ok(keyed.getFullResource(rid));
      expect(full.data.texts?.['body']?.value?.body).toContain('Lava flows');
      const doomed = await ok(keyed.createResource({ title: 'Doomed', texts: { t: { body: 'short lived' } } }));
      await ok(keyed.getResourceFromData({ id: doomed.uuid }).delete());
      expect(await refused(keyed.getResource(doomed.uuid))).toBe(404);
      const list = await ok(keyed.listResources());
      expect(list.resources.map((r) => r.id)).toEqual([rid]);
    });

    it('uploads a file (one request and TUS) into new resources and into a resource field', async () => {
      const file = new File([Buffer.from('Magma rises and the volcano erupts.')], 'notes.txt', { type: 'text/plain' });
      const single = await ok(keyed.upload(file, false));
      expect(single.completed).toBe(true);
      expect(single.resource).toMatch(ID);
      const statuses = await lastValueFrom(keyed.upload(new File([Buffer.from('Ash clouds.')], 'ash.txt', { type: 'text/plain' }), true));
      expect(statuses).toMatchObject({ completed: true });
      const resource = await ok(keyed.getResource(rid));
      const field = await ok(resource.upload('attachment', new File([Buffer.from('Basalt.')], 'rock.txt', { type: 'text/plain' }), false));
      expect(field).toMatchObject({ completed: true, resource: rid });
    });

    it("uploads with the SDK's split metadata (x-split-strategy, one request and TUS): the file is split by that strategy", async () => {
      const split = (await ok(keyed.createSplitStrategy({ name: 'upload-small', max_paragraph: 100 }))) as unknown as string;
      const long = Array.from({ length: 12 }, (_, i) => `Sentence ${i} tells how lava cools into basalt columns.`).join(' ');
      type Extracted = {
        data: {
          files?: Record<
            string,
            {
              value?: { split_strategy?: string };
              extracted?: { metadata?: { metadata: { paragraphs: { start: number; end: number }[] } } };
            }
          >;
        };
      };
      const paragraphs = async (rid: string) =>
        topology.http.eventually(
          async () => {
            const r = await topology.http.call<Extracted>(
              'GET',
              `/api/v1/kb/${kbid}/resource/${rid}?show=values&show=extracted&extracted=metadata`,
              {
                credential: bearer(pat),
              },
            );
            const field = Object.values(r.body.data?.files ?? {})[0];
            const ps = field?.extracted?.metadata?.metadata.paragraphs;
            return ps && ps.length > 0 ? { ps, named: field?.value?.split_strategy } : undefined;
          },
          60_000,
          `resource ${rid} processed`,
        );
      for (const tus of [false, true]) {
        const done = (await lastValueFrom(
          keyed.upload(new File([Buffer.from(long)], `long-${tus}.txt`, { type: 'text/plain' }), tus, { split }),
        )) as { completed?: boolean; resource?: string };
        expect(done.completed).toBe(true);
        const rid = tus ? (await ok(keyed.listResources(0, 50))).resources.find((r) => r.title === `long-${tus}.txt`)?.id : done.resource;
        const { ps, named } = await paragraphs(rid as string);
        expect(named).toBe(split);
        expect(ps.length).toBeGreaterThanOrEqual(Math.floor(long.length / 100));
        for (const p of ps) expect(p.end - p.start).toBeLessThanOrEqual(100);
      }
      // A strategy the KB does not have: refused before any byte is stored, at its header; nothing created.
      const before = (await ok(keyed.listResources(0, 50))).resources.length;
      const unknown = 'f'.repeat(32);
      expect(
        await lastValueFrom(keyed.upload(new File([Buffer.from(long)], 'x.txt', { type: 'text/plain' }), false, { split: unknown })),
      ).toMatchObject({ failed: true });
      expect(
        await lastValueFrom(keyed.upload(new File([Buffer.from(long)], 'y.txt', { type: 'text/plain' }), true, { split: unknown })),
      ).toMatchObject({ failed: true });
      const direct = await topology.http.call<{ detail: { loc: string[] }[] }>('POST', `/api/v1/kb/${kbid}/upload`, {
        credential: bearer(pat),
        headers: { 'content-type': 'text/plain', 'x-split-strategy': unknown, 'x-extract-strategy': '../etc' },
        body: 'hello',
      });
      expect(direct.status).toBe(422);
      expect(direct.body.detail.map((d) => d.loc.join('.'))).toEqual(['header.x-extract-strategy']);
      const missing = await topology.http.call<{ detail: { loc: string[] }[] }>('POST', `/api/v1/kb/${kbid}/upload`, {
        credential: bearer(pat),
        headers: { 'content-type': 'text/plain', 'x-split-strategy': unknown },
        body: 'hello',
      });
      expect([missing.status, missing.body.detail.map((d) => d.loc.join('.'))]).toEqual([422, ['header.x-split-strategy']]);
      expect((await ok(keyed.listResources(0, 50))).resources.length).toBe(before);
      await ok(keyed.deleteSplitStrategy(split));
    }, 120_000);

    it('finds, searches, suggests and asks (synchronous and streamed)', async () => {
      await topology.http.eventually(
        async () => {
          const found = await firstValueFrom(keyed.find('lava'));
          return !isError(found) && Object.keys(found.resources ?? {}).includes(rid) ? found : undefined;
        },
        60_000,
        'the resource found',
      );
      const found = await ok(keyed.find('lava crater'));
      expect(found.type).toBe('findResults');
      const searched = (await ok(keyed.search('lava', []))) as { type: string; resources?: Record<string, unknown> };
      expect(searched.type).toBe('searchResults');
      expect(Object.keys(searched.resources ?? {})).toContain(rid);
      expect(await ok(keyed.catalog('volcano'))).toMatchObject({ type: 'searchResults' });
      expect(await ok(keyed.suggest('lav'))).toMatchObject({ type: 'suggestions' });
      const sync = await ok(keyed.ask('Where does lava flow from?', [], undefined, { synchronous: true }) as Observable<unknown>);
      expect(sync).toMatchObject({ type: 'answer', incomplete: false });
      const streamed = await lastValueFrom(
        keyed.ask('Where does lava flow from?') as Observable<{ type: string; incomplete?: boolean; text?: string }>,
      );
      expect(streamed).toMatchObject({ type: 'answer', incomplete: false });
      expect(streamed.text).toBeTruthy();
    }, 120_000);

    it('writes and reads label sets, synonyms and counters; reads entities groups', async () => {
      await ok(
        keyed.setLabelSet('topics', {
          title: 'Topics',
          color: '#f00',
          multiple: true,
          kind: ['RESOURCES' as never],
          labels: [{ title: 'geology' }],
        }),
      );
      const labels = await ok(keyed.getLabels());
      expect(labels['topics']?.labels.map((l) => l.title)).toEqual(['geology']);
      await ok(keyed.deleteLabelSet('topics'));
      expect(await ok(keyed.getLabels())).toEqual({});
      await ok(keyed.setSynonyms({ lava: ['magma'] }));
      expect(await ok(keyed.getSynonyms())).toEqual({ lava: ['magma'] });
      expect(await ok(keyed.getEntities())).toBeDefined();
      const counters = await ok(keyed.counters());
      expect(counters.resources).toBeGreaterThanOrEqual(1);
    });

    it('saves a search configuration and split and extract strategies', async () => {
      await ok(keyed.createSearchConfig('quick', { kind: 'find', config: { features: ['keyword'], top_k: 3 } } as never));
      const found = await ok(keyed.find('lava', [], { search_configuration: 'quick' } as never));
      expect(found.type).toBe('findResults');
      await ok(keyed.updateSearchConfig('quick', { kind: 'find', config: { features: ['keyword'], top_k: 1 } } as never));
      await ok(keyed.deleteSearchConfig('quick'));
      // The SDK's flat split form, stored in ours.
      const split = (await ok(keyed.createSplitStrategy({ name: 'small', max_paragraph: 300 }))) as unknown as string;
      expect(split).toMatch(/^[0-9a-f]{32}$/);
      const stored = await topology.http.call('GET', `/api/v1/kb/${kbid}/split_strategies/strategy/${split}`, { credential: bearer(pat) });
      expect(stored.body).toEqual({ name: 'small', split: { max_paragraph: 300 } });
      expect(await refused(keyed.createSplitStrategy({ name: 'llm', max_paragraph: 300, custom_split: 2 as never }))).toBe(422);
      const extract = (await ok(keyed.createExtractStrategy({ name: 'plain', split: { max_paragraph: 500 } }))) as unknown as string;
      expect(extract).toMatch(/^[0-9a-f]{32}$/);
      expect(await refused(keyed.createExtractStrategy({ name: 'vllm', vllm_config: {} }))).toBe(422);
      await ok(keyed.deleteExtractStrategy(extract));
      await ok(keyed.deleteSplitStrategy(split));
      expect(await refused(keyed.deleteSplitStrategy(split))).toBe(404);
    });

    it('reads, writes and deletes fields; reprocesses; searches, finds and asks within a resource', async () => {
      const resource = await ok(keyed.getResource(rid));
      const field = (await ok(resource.getField(FIELD_TYPE.text, 'body'))) as { value?: { body?: string } };
      expect(field.value?.body).toContain('Lava flows');
      await ok(resource.setField(FIELD_TYPE.text, 'extra', { body: 'Pumice floats on water.' }));
      expect(((await ok(resource.getField(FIELD_TYPE.text, 'extra'))) as { value?: { body?: string } }).value?.body).toBe(
        'Pumice floats on water.',
      );
      await ok(resource.deleteField(FIELD_TYPE.text, 'extra'));
      expect(await refused(resource.getField(FIELD_TYPE.text, 'extra'))).toBe(404);
      expect(await ok(resource.reprocess())).toMatchObject({ seqid: expect.any(Number) });
      const inside = (await ok(resource.search('lava'))) as { paragraphs?: { results: { rid: string }[] } };
      expect(inside.paragraphs?.results.length).toBeGreaterThan(0);
      expect(inside.paragraphs?.results.every((p) => p.rid === rid)).toBe(true);
      const found = await ok(resource.find('lava'));
      expect(Object.keys((found as { resources?: Record<string, unknown> }).resources ?? {})).toEqual([rid]);
      const answer = await ok(resource.ask('Where does lava flow from?', [], undefined, { synchronous: true }) as Observable<unknown>);
      expect(answer).toMatchObject({ type: 'answer' });
      const whole = await ok(
        resource.askToResource('Where does lava flow from?', [], undefined, { synchronous: true }) as Observable<unknown>,
      );
      expect(whole).toMatchObject({ type: 'answer' });
      expect(await refused(keyed.getEntitiesGroup('NOT-A-GROUP'))).toBe(404);
    });

    it('reads facets, models, invitations and KB indexes; takes feedback; rephrases', async () => {
      expect(await ok(keyed.getFacets(['/icon']))).toBeDefined();
      expect(await ok(keyed.feedback('0'.repeat(32), true))).toBeDefined();
      expect(await ok(keyed.rephrase('lava?'))).toBeTruthy();
      expect(await ok(kb.getInvites())).toEqual([]);
      expect(await ok(owner.db.getAccountInvitations(account.id))).toEqual([]);
      expect((await ok(owner.db.getKbIndexes(account.id))).map((i) => i.kb_id)).toContain(kbid);
      expect((await ok(owner.db.getStandaloneKbs())).map((k) => k.uuid)).toContain(kbid);
      expect(Array.isArray(await ok(kb.activityMonitor.getRemiScores(new Date(Date.now() - 86_400_000).toISOString())))).toBe(true);
    });

    it('reads the generative providers and predicts answers (synchronous plain text, and streamed)', async () => {
      const providers = await ok(keyed.getGenerativeProviders());
      expect(providers['builtin']).toMatchObject({ title: 'Built-in', enterprise_readiness: true });
      expect(providers['builtin']?.models['extractive']).toMatchObject({ name: 'extractive', title: 'Built-in extractive answers' });
      const context = ['The lava flows from the crater down the slope.', 'Bread rises in a warm oven.'];
      const sync = await ok(keyed.predictAnswer('Where does the lava flow from?', { query_context: context }, true));
      expect(sync).toMatchObject({ type: 'answer', incomplete: false, text: 'The lava flows from the crater down the slope.' });
      const streamed = (await lastValueFrom(keyed.predictAnswer('Where does the lava flow from?', { query_context: context }))) as {
        type: string;
        text?: string;
        incomplete?: boolean;
      };
      expect(streamed).toMatchObject({ type: 'answer', incomplete: false, text: 'The lava flows from the crater down the slope.' });
    });

    it('refuses a key of the KB on another KB, and a bad resource', async () => {
      const other = await ok(owner.db.createKnowledgeBox(account.id, { slug: `sdk-other-${run}`, title: 'Other' }, zone));
      const sdk = new Nuclia({ backend, zone, proxy: true, knowledgeBox: other.id, apiKey: key, client: 'e2e' });
      const elsewhere = await ok(sdk.db.getKnowledgeBox());
      expect(await refused(elsewhere.createResource({ title: 'nope' }))).toBeGreaterThanOrEqual(401);
      expect(await refused(keyed.createResource({ title: 'x'.repeat(2049) }))).toBe(422);
    });
  });

  it('deletes the KB', async () => {
    await ok(kb.delete());
    expect(await refused(owner.db.getKnowledgeBox(account.id, kbid, zone))).toBe(404);
  });
});
