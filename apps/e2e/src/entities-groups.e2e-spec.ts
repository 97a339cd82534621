import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Issue = { loc: (string | number)[]; msg: string; type: string };
type Entity = { value: string; merged: boolean; represents: string[] };
type Group = { title: string | null; color: string | null; custom: boolean; entities: Record<string, Entity> };
type Groups = { uuid: string; groups: Record<string, Group> };
type Suggest = { entities: { total: number; entities: { family: string; value: string }[] } };

/**
 * Entities groups over HTTP (standalone): the groups processing found, custom groups and their
 * entities, changes to found groups, /suggest, roles, tenants, bounds and bad input.
 */
describe('entities groups', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let account: string;
  let kb: string;
  let otherKb: string;
  const keys: Record<'reader' | 'writer', NonNullable<Credential>> = {} as never;
  const run = Date.now().toString(36);
  const loc = (body: unknown) => [...new Set((body as { detail: Issue[] }).detail.map((d) => d.loc.join('.')))].sort();
  const path = (k = kb) => `/api/v1/kb/${k}`;

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    account = boot.account.id;
    const newKb = async (slug: string) =>
      (await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug } })).body.id;
    kb = await newKb(`entities-${run}`);
    otherKb = await newKb(`entities-other-${run}`);
    for (const [name, role] of [
      ['reader', 'SMEMBER'],
      ['writer', 'SCONTRIBUTOR'],
    ] as const) {
      const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_accounts`, {
        credential: pat,
        body: { role },
      });
      const key = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_account/${sa.body.id}/keys`, {
        credential: pat,
        body: { expires: new Date(Date.now() + 3600_000).toISOString() },
      });
      keys[name] = apiKey(key.body.token);
    }
    const created = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
      credential: pat,
      body: {
        title: 'Contacts',
        texts: { body: { body: 'Write to alice@example.com or to bob@example.org for the 2024-05-06 meeting.' } },
      },
    });
    expect(created.status).toBe(201);
    await http.eventually(
      async () => {
        const r = await http.call<{ metadata: { status: string } }>('GET', `${path()}/resource/${created.body.uuid}`, { credential: pat });
        return r.body.metadata?.status === 'PROCESSED' ? true : undefined;
      },
      60_000,
      'the resource processed',
    );
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('lists the groups processing found, and their entities per group', async () => {
    const list = await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: keys.reader });
    expect(list.status).toBe(200);
    expect(list.body.uuid).toBe(kb);
    expect(list.body.groups['EMAIL']).toEqual({ title: null, color: null, custom: false, entities: {} });
    expect(list.body.groups['DATE']).toBeDefined();
    const email = await http.call<Group>('GET', `${path()}/entitiesgroup/EMAIL`, { credential: keys.reader });
    expect(email.status).toBe(200);
    expect(email.body).toEqual({
      title: null,
      color: null,
      custom: false,
      entities: {
        'alice@example.com': { value: 'alice@example.com', merged: false, represents: [] },
        'bob@example.org': { value: 'bob@example.org', merged: false, represents: [] },
      },
    });
    // Another KB of the same account sees none of them.
    expect((await http.call<Groups>('GET', `${path(otherKb)}/entitiesgroups`, { credential: pat })).body.groups).toEqual({});
    expect((await http.call('GET', `${path(otherKb)}/entitiesgroup/EMAIL`, { credential: pat })).status).toBe(404);
  });

  it('creates, reads, updates and deletes a custom group', async () => {
    const body = {
      group: 'ANIMALS',
      title: 'Animals',
      color: 'green',
      entities: { cat: { value: 'cat' }, dog: { value: 'dog', represents: ['puppy'] } },
    };
    const created = await http.call('POST', `${path()}/entitiesgroups`, { credential: keys.writer, body });
    expect(created.status).toBe(200);
    expect((await http.call('POST', `${path()}/entitiesgroups`, { credential: keys.writer, body })).status).toBe(409);
    const group = await http.call<Group>('GET', `${path()}/entitiesgroup/ANIMALS`, { credential: keys.reader });
    expect(group.body).toEqual({
      title: 'Animals',
      color: 'green',
      custom: true,
      entities: { cat: { value: 'cat', merged: false, represents: [] }, dog: { value: 'dog', merged: false, represents: ['puppy'] } },
    });
    expect((await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: keys.reader })).body.groups['ANIMALS']).toEqual({
      title: 'Animals',
      color: 'green',
      custom: true,
      entities: {},
    });

    const patched = await http.call('PATCH', `${path()}/entitiesgroup/ANIMALS`, {
      credential: keys.writer,
      body: { title: 'Pets', add: { catfish: { value: 'catfish' } }, update: { dog: { value: 'doggo', merged: true } }, delete: ['cat'] },
    });
    expect(patched.status).toBe(200);
    const after = await http.call<Group>('GET', `${path()}/entitiesgroup/ANIMALS`, { credential: keys.reader });
    expect(after.body).toEqual({
      title: 'Pets',
      color: 'green',
      custom: true,
      entities: { catfish: { value: 'catfish', merged: false, represents: [] }, dog: { value: 'doggo', merged: true, represents: [] } },
    });

    // Custom entities are suggested with those processing found.
    const suggest = await http.call<Suggest>('GET', `${path()}/suggest?query=cat&features=entities`, { credential: keys.reader });
    expect(suggest.status).toBe(200);
    expect(suggest.body.entities.entities).toContainEqual({ family: 'ANIMALS', value: 'catfish' });

    expect((await http.call('DELETE', `${path()}/entitiesgroup/ANIMALS`, { credential: keys.writer })).status).toBe(200);
    expect((await http.call('GET', `${path()}/entitiesgroup/ANIMALS`, { credential: keys.reader })).status).toBe(404);
    expect((await http.call('DELETE', `${path()}/entitiesgroup/ANIMALS`, { credential: keys.writer })).status).toBe(404);
    expect(
      (await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: keys.reader })).body.groups['ANIMALS'],
    ).toBeUndefined();
  });

  it('changes a group processing found: extra entities, hidden entities, and deleting the whole group', async () => {
    expect((await http.call('POST', `${path()}/entitiesgroups`, { credential: keys.writer, body: { group: 'DATE' } })).status).toBe(409);
    const patched = await http.call('PATCH', `${path()}/entitiesgroup/EMAIL`, {
      credential: keys.writer,
      body: { title: 'E-mail addresses', add: { 'carol@example.net': { value: 'carol@example.net' } }, delete: ['bob@example.org'] },
    });
    expect(patched.status).toBe(200);
    const email = await http.call<Group>('GET', `${path()}/entitiesgroup/EMAIL`, { credential: keys.reader });
    expect(email.body.title).toBe('E-mail addresses');
    expect(email.body.custom).toBe(false);
    expect(Object.keys(email.body.entities).sort()).toEqual(['alice@example.com', 'carol@example.net']);
    const suggest = await http.call<Suggest>('GET', `${path()}/suggest?query=bob&features=entities`, { credential: keys.reader });
    expect(suggest.body.entities.entities).not.toContainEqual({ family: 'EMAIL', value: 'bob@example.org' });

    expect((await http.call('DELETE', `${path()}/entitiesgroup/DATE`, { credential: keys.writer })).status).toBe(200);
    expect((await http.call('GET', `${path()}/entitiesgroup/DATE`, { credential: keys.reader })).status).toBe(404);
    expect((await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: keys.reader })).body.groups['DATE']).toBeUndefined();
    // Created again, it is a custom group holding only what it was given.
    expect(
      (
        await http.call('POST', `${path()}/entitiesgroups`, {
          credential: keys.writer,
          body: { group: 'DATE', entities: { today: { value: 'today' } } },
        })
      ).status,
    ).toBe(200);
    const date = await http.call<Group>('GET', `${path()}/entitiesgroup/DATE`, { credential: keys.reader });
    expect(date.body.custom).toBe(true);
    expect(date.body.entities['today']).toEqual({ value: 'today', merged: false, represents: [] });
  });

  it('refuses readers, other KBs and unknown groups', async () => {
    expect((await http.call('POST', `${path()}/entitiesgroups`, { credential: keys.reader, body: { group: 'X' } })).status).toBe(403);
    expect((await http.call('PATCH', `${path()}/entitiesgroup/EMAIL`, { credential: keys.reader, body: {} })).status).toBe(403);
    expect((await http.call('DELETE', `${path()}/entitiesgroup/EMAIL`, { credential: keys.reader })).status).toBe(403);
    expect((await http.call('GET', `${path(otherKb)}/entitiesgroups`, { credential: keys.reader })).status).toBe(403);
    expect((await http.call('GET', `${path()}/entitiesgroups`)).status).toBe(401);
    expect((await http.call('PATCH', `${path()}/entitiesgroup/NOPE`, { credential: keys.writer, body: { title: 'x' } })).status).toBe(404);
    // A group name no group can have: too long, or with a slash (the tags' separator).
    for (const group of ['x'.repeat(251), 'a%2Fb']) {
      expect([group, (await http.call('GET', `${path()}/entitiesgroup/${group}`, { credential: keys.reader })).status]).toEqual([
        group,
        422,
      ]);
      expect([group, (await http.call('DELETE', `${path()}/entitiesgroup/${group}`, { credential: keys.writer })).status]).toEqual([
        group,
        422,
      ]);
    }
  });

  it('answers 422 naming every bad member, and keeps the KB unchanged', async () => {
    const before = await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: pat });
    const cases: [string, string, unknown, string[]][] = [
      ['POST', 'entitiesgroups', {}, ['body.group']],
      ['POST', 'entitiesgroups', { group: 'has/slash' }, ['body.group']],
      ['POST', 'entitiesgroups', { group: 'x'.repeat(101) }, ['body.group']],
      ['POST', 'entitiesgroups', { group: 'OK', title: 5, color: [] }, ['body.color', 'body.title']],
      [
        'POST',
        'entitiesgroups',
        {
          group: 'OK',
          entities: { a: { value: '' }, b: 'str', c: { value: 'c', represents: Array(51).fill('r') }, d: { value: 'd', extra: 1 } },
        },
        ['body.entities.a.value', 'body.entities.b', 'body.entities.c.represents', 'body.entities.d.extra'],
      ],
      ['PATCH', 'entitiesgroup/EMAIL', { add: [], delete: 'x' }, ['body.add', 'body.delete']],
      ['PATCH', 'entitiesgroup/EMAIL', { update: { e: { value: 'v'.repeat(251) } } }, ['body.update.e.value']],
    ];
    for (const [method, route, body, expected] of cases) {
      const res = await http.call(method, `${path()}/${route}`, { credential: pat, body });
      expect([method, route, res.status, loc(res.body)]).toEqual([method, route, 422, expected]);
    }
    const tooMany = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`e${i}`, { value: `e${i}` }]));
    const big = await http.call('POST', `${path()}/entitiesgroups`, { credential: pat, body: { group: 'BIG', entities: tooMany } });
    expect([big.status, loc(big.body)]).toEqual([422, ['body.entities']]);
    expect((await http.call('GET', `${path()}/entitiesgroups?show_entities=true`, { credential: pat })).status).toBe(422);
    expect((await http.call<Groups>('GET', `${path()}/entitiesgroups`, { credential: pat })).body).toEqual(before.body);
  });

  it('bounds the groups a KB keeps', async () => {
    const fresh = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, {
        credential: pat,
        body: { slug: `entities-bound-${run}` },
      })
    ).body.id;
    for (let i = 0; i < 100; i++) {
      const res = await http.call('POST', `${path(fresh)}/entitiesgroups`, { credential: pat, body: { group: `G${i}` } });
      expect(res.status).toBe(200);
    }
    const over = await http.call('POST', `${path(fresh)}/entitiesgroups`, { credential: pat, body: { group: 'G100' } });
    expect([over.status, loc(over.body)]).toEqual([422, ['body.group']]);
    expect(Object.keys((await http.call<Groups>('GET', `${path(fresh)}/entitiesgroups`, { credential: pat })).body.groups)).toHaveLength(
      100,
    );
    // A deleted custom group frees its place.
    expect((await http.call('DELETE', `${path(fresh)}/entitiesgroup/G0`, { credential: pat })).status).toBe(200);
    expect((await http.call('POST', `${path(fresh)}/entitiesgroups`, { credential: pat, body: { group: 'G100' } })).status).toBe(200);
  }, 60_000);
});
