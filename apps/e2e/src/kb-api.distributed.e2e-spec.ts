import { bearer, type Credential, type HttpClient } from './support/http-client';
import { startDistributed, type Topology } from './support/topologies';
import { resourceProcessed } from './support/kb-fixtures';

type Group = { title: string | null; custom: boolean; entities: Record<string, { value: string }> };

/**
 * The issue-20 routes whose answers come from more than one service, every app its own process over
 * NATS with the permissions of the bus access table: entities groups (content's index and store),
 * resource search, and the account-screen routes answered by accounts.
 */
describe('KB API over NATS (distributed)', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let account: string;
  let kb: string;
  let rid: string;

  beforeAll(async () => {
    topology = await startDistributed();
    http = topology.http;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    account = boot.account.id;
    kb = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug: `kb-api-${Date.now()}` } })
    ).body.id;
    rid = (
      await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
        body: { title: 'Contacts', texts: { body: { body: 'Mail carol@example.com about the harbour crane.' } } },
      })
    ).body.uuid;
    await resourceProcessed(http, pat, kb, rid);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('entities groups: found by processing, custom ones written and read back, used by /suggest', async () => {
    const email = await http.call<Group>('GET', `/api/v1/kb/${kb}/entitiesgroup/EMAIL`, { credential: pat });
    expect(email.status).toBe(200);
    expect(Object.keys(email.body.entities)).toEqual(['carol@example.com']);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/entitiesgroups`, {
          credential: pat,
          body: { group: 'MACHINES', entities: { crane: { value: 'crane' } } },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await http.call('PATCH', `/api/v1/kb/${kb}/entitiesgroup/MACHINES`, {
          credential: pat,
          body: { add: { crane2: { value: 'crane hoist' } } },
        })
      ).status,
    ).toBe(200);
    const machines = await http.call<Group>('GET', `/api/v1/kb/${kb}/entitiesgroup/MACHINES`, { credential: pat });
    expect([machines.body.custom, Object.keys(machines.body.entities).sort()]).toEqual([true, ['crane', 'crane2']]);
    const suggest = await http.call<{ entities: { entities: { family: string; value: string }[] } }>(
      'GET',
      `/api/v1/kb/${kb}/suggest?query=cra&features=entities`,
      { credential: pat },
    );
    expect(suggest.body.entities.entities).toEqual(
      expect.arrayContaining([
        { family: 'MACHINES', value: 'crane' },
        { family: 'MACHINES', value: 'crane hoist' },
      ]),
    );
    const groups = await http.call<{ groups: Record<string, Group> }>('GET', `/api/v1/kb/${kb}/entitiesgroups`, { credential: pat });
    expect(Object.keys(groups.body.groups)).toEqual(expect.arrayContaining(['EMAIL', 'MACHINES']));
    expect((await http.call('POST', `/api/v1/kb/${kb}/entitiesgroups`, { credential: pat, body: { group: 'EMAIL' } })).status).toBe(409);
    expect((await http.call('DELETE', `/api/v1/kb/${kb}/entitiesgroup/MACHINES`, { credential: pat })).status).toBe(200);
    expect((await http.call('GET', `/api/v1/kb/${kb}/entitiesgroup/MACHINES`, { credential: pat })).status).toBe(404);
  });

  it('resource search, and the account screens answered by accounts', async () => {
    const search = await http.call<{ paragraphs: { results: { rid: string }[] } }>(
      'GET',
      `/api/v1/kb/${kb}/resource/${rid}/search?query=harbour`,
      { credential: pat },
    );
    expect(search.status).toBe(200);
    expect(search.body.paragraphs.results.map((r) => r.rid)).toEqual([rid]);
    const zone = (await http.call<{ zone: string }>('GET', `/api/v1/account/${account}/kb/${kb}`, { credential: pat })).body.zone;
    expect((await http.call<{ id: string }[]>('GET', '/api/v1/zones', { credential: pat })).body.map((z) => z.id)).toContain(zone);
    expect((await http.call('GET', `/api/v1/account/${account}/index/kbs`, { credential: pat })).body).toContainEqual({
      account_id: account,
      kb_id: kb,
      zone_id: zone,
    });
    expect((await http.call('GET', `/api/v1/account/${account}/kb/${kb}/permissions`, { credential: pat })).body).toEqual({
      account_id: account,
      kb_id: kb,
      role: 'SOWNER',
      permissions: ['READER', 'WRITER', 'MANAGER'],
    });
  });

  it('saved configurations: a search configuration applied by /find, a split strategy applied by the workers (asked of content over NATS)', async () => {
    const preset = { kind: 'find', config: { query: 'harbour crane', features: ['keyword'], top_k: 1 } };
    expect((await http.call('POST', `/api/v1/kb/${kb}/search_configurations/crane`, { credential: pat, body: preset })).status).toBe(201);
    const inline = await http.call<{ best_matches: string[] }>('POST', `/api/v1/kb/${kb}/find`, { credential: pat, body: preset.config });
    const saved = await http.call<{ best_matches: string[] }>('POST', `/api/v1/kb/${kb}/find`, {
      credential: pat,
      body: { search_configuration: 'crane' },
    });
    expect(saved.body.best_matches).toHaveLength(1);
    expect(saved.body.best_matches).toEqual(inline.body.best_matches);
    const id = (
      await http.call<string>('POST', `/api/v1/kb/${kb}/split_strategies`, {
        credential: pat,
        body: { name: 'small', split: { max_paragraph: 100 } },
      })
    ).body;
    const text = Array.from({ length: 10 }, (_, i) => `Crane ${i + 1} lifts the containers off the ships in the harbour.`).join(' ');
    const split = (
      await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
        body: { title: 'Cranes', texts: { body: { body: text, split_strategy: id } } },
      })
    ).body.uuid;
    type Extracted = {
      metadata: { status: string };
      data: { texts: Record<string, { extracted?: { metadata?: { metadata: { paragraphs: { start: number; end: number }[] } } } }> };
    };
    const done = await http.eventually(
      async () => {
        const r = await http.call<Extracted>('GET', `/api/v1/kb/${kb}/resource/${split}?show=basic&show=extracted&extracted=metadata`, {
          credential: pat,
        });
        return r.body.metadata?.status === 'PROCESSED' ? r.body : undefined;
      },
      90_000,
      'the split resource processed',
    );
    const paragraphs = done.data.texts['body']?.extracted?.metadata?.metadata.paragraphs ?? [];
    expect(paragraphs.length).toBeGreaterThanOrEqual(text.length / 100);
    for (const p of paragraphs) expect(p.end - p.start).toBeLessThanOrEqual(100);
  });
});
