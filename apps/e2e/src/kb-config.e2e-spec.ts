import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Issue = { loc: (string | number)[]; msg: string; type: string };
type Find = { resources: Record<string, unknown>; best_matches: string[]; query: string };
type Paragraph = { start: number; end: number };
type Extracted = {
  data: { texts: Record<string, { extracted?: { metadata?: { metadata: { paragraphs: Paragraph[] } } } }> };
  metadata: { status: string };
};

/**
 * A KB's saved configurations over HTTP (standalone): search configurations (CRUD, applied by
 * /find and /ask), key-value schemas, split and extract strategies (CRUD, and a split strategy
 * applied by processing), with roles, tenants, bounds and bad input.
 */
describe('KB configurations', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let kb: string;
  let otherKb: string;
  const keys: Record<'reader' | 'writer', NonNullable<Credential>> = {} as never;
  const run = Date.now().toString(36);
  const locs = (body: unknown) => [...new Set((body as { detail: Issue[] }).detail.map((d) => d.loc.join('.')))].sort();
  const path = (k = kb) => `/api/v1/kb/${k}`;
  const LONG = Array.from(
    { length: 24 },
    (_, i) => `Sentence number ${i + 1} says the moon pulls the oceans and makes the tides rise and fall.`,
  ).join(' ');

  const processed = async (rid: string): Promise<Extracted> =>
    http.eventually(
      async () => {
        const r = await http.call<Extracted>('GET', `${path()}/resource/${rid}?show=basic&show=extracted&extracted=metadata`, {
          credential: pat,
        });
        return r.body.metadata?.status === 'PROCESSED' ? r.body : undefined;
      },
      60_000,
      'the resource processed',
    );

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    const account = boot.account.id;
    const newKb = async (slug: string) =>
      (await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug } })).body.id;
    kb = await newKb(`configs-${run}`);
    otherKb = await newKb(`configs-other-${run}`);
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
    for (const [slug, text] of [
      ['tides', 'The moon pulls the oceans and makes the tides.'],
      ['bread', 'Yeast ferments the dough and makes bread rise.'],
      ['rain', 'Clouds make rain when droplets grow heavy.'],
    ]) {
      const created = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
        credential: pat,
        body: { slug, title: slug, texts: { body: { body: text } } },
      });
      expect(created.status).toBe(201);
      await processed(created.body.uuid);
    }
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  describe('search configurations', () => {
    const preset = { kind: 'find', config: { query: 'moon tides', features: ['keyword'], top_k: 2, reranker: 'noop' } };

    it('creates, reads, lists, updates and deletes a configuration; managers write, readers read', async () => {
      const url = `${path()}/search_configurations/short-${run}`;
      expect((await http.call('POST', url, { credential: keys.writer, body: preset })).status).toBe(403);
      expect((await http.call('POST', url, { credential: keys.reader, body: preset })).status).toBe(403);
      expect((await http.call('POST', url, { credential: pat, body: preset })).status).toBe(201);
      expect((await http.call('POST', url, { credential: pat, body: preset })).status).toBe(409);
      const got = await http.call('GET', url, { credential: keys.reader });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(preset);
      expect(
        (await http.call<Record<string, unknown>>('GET', `${path()}/search_configurations`, { credential: keys.reader })).body,
      ).toEqual({ [`short-${run}`]: preset });
      const changed = { kind: 'find', config: { query: 'bread', top_k: 1 } };
      expect((await http.call('PATCH', url, { credential: pat, body: changed })).status).toBe(200);
      expect((await http.call('GET', url, { credential: pat })).body).toEqual(changed);
      expect((await http.call('PATCH', `${path()}/search_configurations/missing`, { credential: pat, body: changed })).status).toBe(404);
      expect((await http.call('DELETE', url, { credential: keys.writer })).status).toBe(403);
      expect((await http.call('DELETE', url, { credential: pat })).status).toBe(204);
      expect((await http.call('GET', url, { credential: pat })).status).toBe(404);
      expect((await http.call('DELETE', url, { credential: pat })).status).toBe(404);
    });

    it('refuses bad bodies and names with every problem located, and stores nothing', async () => {
      const bad: [unknown, string[]][] = [
        [{ kind: 'find', config: { top_k: 999, features: ['nope'] } }, ['body.config.features.0', 'body.config.top_k']],
        [{ kind: 'search', config: {} }, ['body.kind']],
        [{ config: { query: 'x' } }, ['body.kind']],
        [{ kind: 'find' }, ['body.config']],
        [{ kind: 'find', config: { search_configuration: 'other' } }, ['body.config.search_configuration']],
        [{ kind: 'find', config: { unknown_member: 1 } }, ['body.config.unknown_member']],
        [{ kind: 'ask', config: { citations: 'sometimes' } }, ['body.config.citations']],
        [{ kind: 'find', config: {}, extra: true }, ['body.extra']],
      ];
      for (const [body, expected] of bad) {
        const res = await http.call('POST', `${path()}/search_configurations/bad-${run}`, { credential: pat, body });
        expect([res.status, locs(res.body)]).toEqual([422, expected]);
      }
      const badName = await http.call('POST', `${path()}/search_configurations/${'x'.repeat(65)}`, { credential: pat, body: preset });
      expect([badName.status, locs(badName.body)]).toEqual([422, ['path.config_name']]);
      expect((await http.call('GET', `${path()}/search_configurations/bad-${run}`, { credential: pat })).status).toBe(404);
    });

    it('applies a saved configuration to /find: the same results as its body inline; request members override it', async () => {
      const name = `tides-${run}`;
      expect((await http.call('POST', `${path()}/search_configurations/${name}`, { credential: pat, body: preset })).status).toBe(201);
      const inline = await http.call<Find>('POST', `${path()}/find`, { credential: keys.reader, body: preset.config });
      const saved = await http.call<Find>('POST', `${path()}/find`, { credential: keys.reader, body: { search_configuration: name } });
      expect(inline.status).toBe(200);
      expect(saved.status).toBe(200);
      expect(inline.body.best_matches.length).toBeGreaterThan(0);
      expect(saved.body.best_matches).toEqual(inline.body.best_matches);
      expect(Object.keys(saved.body.resources).sort()).toEqual(Object.keys(inline.body.resources).sort());
      const viaGet = await http.call<Find>('GET', `${path()}/find?search_configuration=${name}`, { credential: keys.reader });
      expect(viaGet.body.best_matches).toEqual(inline.body.best_matches);
      // The request's own members replace the saved ones.
      const bread = await http.call<Find>('POST', `${path()}/find`, {
        credential: keys.reader,
        body: { search_configuration: name, query: 'yeast bread', top_k: 1 },
      });
      const breadInline = await http.call<Find>('POST', `${path()}/find`, {
        credential: keys.reader,
        body: { ...preset.config, query: 'yeast bread', top_k: 1 },
      });
      expect(bread.body.query).toBe('yeast bread');
      expect(bread.body.best_matches).toHaveLength(1);
      expect(bread.body.best_matches).toEqual(breadInline.body.best_matches);
      expect(bread.body.best_matches[0]).not.toBe(inline.body.best_matches[0]);
    });

    it('refuses unknown names, names of the other kind, and configurations of other KBs', async () => {
      const unknown = await http.call('POST', `${path()}/find`, { credential: pat, body: { search_configuration: 'nowhere' } });
      expect([unknown.status, locs(unknown.body)]).toEqual([422, ['body.search_configuration']]);
      const badName = await http.call('POST', `${path()}/find`, { credential: pat, body: { search_configuration: 'a/b' } });
      expect([badName.status, locs(badName.body)]).toEqual([422, ['body.search_configuration']]);
      const askName = `ask-${run}`;
      expect(
        (
          await http.call('POST', `${path()}/search_configurations/${askName}`, {
            credential: pat,
            body: { kind: 'ask', config: { features: ['keyword'], top_k: 1 } },
          })
        ).status,
      ).toBe(201);
      const wrongKind = await http.call('POST', `${path()}/find`, { credential: pat, body: { search_configuration: askName } });
      expect([wrongKind.status, locs(wrongKind.body)]).toEqual([422, ['body.search_configuration']]);
      // Another KB of the same account sees none of this KB's configurations.
      expect((await http.call('GET', `${path(otherKb)}/search_configurations`, { credential: pat })).body).toEqual({});
      expect((await http.call('GET', `${path(otherKb)}/search_configurations/${askName}`, { credential: pat })).status).toBe(404);
      const elsewhere = await http.call('POST', `${path(otherKb)}/find`, {
        credential: pat,
        body: { search_configuration: `tides-${run}` },
      });
      expect(elsewhere.status).toBe(422);
    });

    it('applies a saved ask configuration to /ask', async () => {
      const name = `ask-one-${run}`;
      expect(
        (
          await http.call('POST', `${path()}/search_configurations/${name}`, {
            credential: pat,
            body: { kind: 'ask', config: { features: ['keyword'], top_k: 1 } },
          })
        ).status,
      ).toBe(201);
      type Sync = { status: string; retrieval_best_matches: { id: string }[] };
      const ask = (body: unknown) =>
        http.call<Sync>('POST', `${path()}/ask`, { credential: keys.reader, headers: { 'x-synchronous': 'true' }, body });
      const plain = await ask({ query: 'What makes the tides?', features: ['keyword'] });
      const saved = await ask({ query: 'What makes the tides?', search_configuration: name });
      expect(plain.status).toBe(200);
      expect(saved.status).toBe(200);
      expect(plain.body.retrieval_best_matches.length).toBeGreaterThan(1);
      expect(saved.body.retrieval_best_matches).toHaveLength(1);
      const unknown = await http.call('POST', `${path()}/ask`, {
        credential: pat,
        headers: { 'x-synchronous': 'true' },
        body: { query: 'tides?', search_configuration: 'nowhere' },
      });
      expect([unknown.status, locs(unknown.body)]).toEqual([422, ['body.search_configuration']]);
    });
  });

  describe('key-value schemas', () => {
    it('creates, reads, lists, updates and deletes a schema; managers write', async () => {
      const body = {
        name: `invoice-${run}`,
        fields: [
          { key: 'total', type: 'float' },
          { key: 'period', type: 'date', range: true, required: false },
        ],
      };
      expect((await http.call('POST', `${path()}/kv-schemas`, { credential: keys.writer, body })).status).toBe(403);
      const created = await http.call('POST', `${path()}/kv-schemas`, { credential: pat, body });
      expect(created.status).toBe(201);
      const stored = {
        name: body.name,
        description: '',
        fields: [
          { key: 'total', type: 'float', description: '', required: true, range: false },
          { key: 'period', type: 'date', description: '', required: false, range: true },
        ],
      };
      expect(created.body).toEqual(stored);
      expect((await http.call('POST', `${path()}/kv-schemas`, { credential: pat, body })).status).toBe(409);
      expect((await http.call('GET', `${path()}/kv-schemas/${body.name}`, { credential: keys.reader })).body).toEqual(stored);
      expect((await http.call('GET', `${path()}/kv-schemas`, { credential: keys.reader })).body).toEqual({
        schemas: { [body.name]: stored },
      });
      const updated = await http.call('PUT', `${path()}/kv-schemas/${body.name}`, { credential: pat, body: { description: 'Invoices' } });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ ...stored, description: 'Invoices' });
      expect((await http.call('PUT', `${path()}/kv-schemas/missing`, { credential: pat, body: { description: 'x' } })).status).toBe(404);
      expect((await http.call('GET', `${path(otherKb)}/kv-schemas/${body.name}`, { credential: pat })).status).toBe(404);
      expect((await http.call('GET', `${path(otherKb)}/kv-schemas`, { credential: pat })).body).toEqual({ schemas: {} });
      expect((await http.call('DELETE', `${path()}/kv-schemas/${body.name}`, { credential: pat })).status).toBe(204);
      expect((await http.call('GET', `${path()}/kv-schemas/${body.name}`, { credential: pat })).status).toBe(404);
      expect((await http.call('DELETE', `${path()}/kv-schemas/${body.name}`, { credential: pat })).status).toBe(404);
    });

    it('refuses bad schemas with every problem located, and keeps at most 20 a KB', async () => {
      const bad: [unknown, string[]][] = [
        [{ name: 'a/b' }, ['body.name']],
        [
          {
            name: 'ok',
            fields: [
              { key: 'x', type: 'text' },
              { key: 'x', type: 'integer' },
            ],
          },
          ['body.fields.1.key'],
        ],
        [{ name: 'ok', fields: [{ key: 'x', type: 'text', range: true }] }, ['body.fields.0.range']],
        [{ name: 'ok', fields: [{ key: 'x', type: 'money' }, { type: 'text' }] }, ['body.fields.0.type', 'body.fields.1.key']],
        [{ name: 'ok', fields: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, type: 'text' })) }, ['body.fields']],
        [{ name: 'ok', colour: 'red' }, ['body.colour']],
      ];
      for (const [body, expected] of bad) {
        const res = await http.call('POST', `${path()}/kv-schemas`, { credential: pat, body });
        expect([res.status, locs(res.body)]).toEqual([422, expected]);
      }
      const badUpdate = await http.call('PUT', `${path()}/kv-schemas/anything`, { credential: pat, body: { name: 'renamed' } });
      expect([badUpdate.status, locs(badUpdate.body)]).toEqual([422, ['body.name']]);
      expect((await http.call('GET', `${path()}/kv-schemas`, { credential: pat })).body).toEqual({ schemas: {} });
      for (let i = 0; i < 20; i++)
        expect((await http.call('POST', `${path(otherKb)}/kv-schemas`, { credential: pat, body: { name: `s${i}` } })).status).toBe(201);
      const over = await http.call('POST', `${path(otherKb)}/kv-schemas`, { credential: pat, body: { name: 's20' } });
      expect([over.status, locs(over.body)]).toEqual([422, ['body.name']]);
      expect(
        Object.keys((await http.call<{ schemas: object }>('GET', `${path(otherKb)}/kv-schemas`, { credential: pat })).body.schemas),
      ).toHaveLength(20);
    });
  });

  describe('split and extract strategies', () => {
    it('creates, reads, lists and deletes strategies of each kind', async () => {
      for (const [kind, body] of [
        ['split', { name: 'small', split: { max_paragraph: 200, overlap: 20 } }],
        ['extract', { name: 'no-ocr', ocr: false }],
      ] as const) {
        const base = `${path()}/${kind}_strategies`;
        expect((await http.call('POST', base, { credential: keys.writer, body })).status).toBe(403);
        const created = await http.call<string>('POST', base, { credential: pat, body });
        expect(created.status).toBe(200);
        expect(created.body).toMatch(/^[0-9a-f]{32}$/);
        const id = created.body;
        expect((await http.call('GET', `${base}/strategy/${id}`, { credential: keys.reader })).body).toEqual(body);
        expect((await http.call('GET', base, { credential: keys.reader })).body).toEqual({ [id]: body });
        expect((await http.call('GET', `${path(otherKb)}/${kind}_strategies/strategy/${id}`, { credential: pat })).status).toBe(404);
        expect((await http.call('GET', `${path(otherKb)}/${kind}_strategies`, { credential: pat })).body).toEqual({});
        expect((await http.call('GET', `${base}/strategy/not-an-id`, { credential: pat })).status).toBe(404);
        expect((await http.call('DELETE', `${base}/strategy/${id}`, { credential: keys.writer })).status).toBe(403);
        expect((await http.call('DELETE', `${base}/strategy/${id}`, { credential: pat })).status).toBe(204);
        expect((await http.call('GET', `${base}/strategy/${id}`, { credential: pat })).status).toBe(404);
        expect((await http.call('DELETE', `${base}/strategy/${id}`, { credential: pat })).status).toBe(404);
      }
    });

    it('refuses bad strategies with every problem located, and stores nothing', async () => {
      const bad: [string, unknown, string[]][] = [
        ['split', { name: 'x', split: { max_paragraph: 10 } }, ['body.split.max_paragraph']],
        ['split', { name: 'x', split: { max_paragraph: 100_000 } }, ['body.split.max_paragraph']],
        ['split', { name: 'x', split: { max_paragraph: 200, overlap: 150 } }, ['body.split.overlap']],
        ['split', { split: { max_paragraph: 200, extra: 1 } }, ['body.name', 'body.split.extra']],
        ['split', { name: 'x' }, ['body.split']],
        ['extract', { name: 'x', ocr: 'no' }, ['body.ocr']],
        ['extract', { name: 'x', vllm: true }, ['body.vllm']],
      ];
      for (const [kind, body, expected] of bad) {
        const res = await http.call('POST', `${path()}/${kind}_strategies`, { credential: pat, body });
        expect([res.status, locs(res.body)]).toEqual([422, expected]);
      }
      expect((await http.call('GET', `${path()}/split_strategies`, { credential: pat })).body).toEqual({});
      expect((await http.call('GET', `${path()}/extract_strategies`, { credential: pat })).body).toEqual({});
    });

    it('processes a text field naming a split strategy into more, smaller paragraphs than the default', async () => {
      const id = (
        await http.call<string>('POST', `${path()}/split_strategies`, {
          credential: pat,
          body: { name: 'small', split: { max_paragraph: 200 } },
        })
      ).body;
      const plain = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
        credential: pat,
        body: { title: 'plain', texts: { body: { body: LONG } } },
      });
      const split = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
        credential: pat,
        body: { title: 'split', texts: { body: { body: LONG, split_strategy: id } } },
      });
      expect([plain.status, split.status]).toEqual([201, 201]);
      const paragraphsOf = async (rid: string) => (await processed(rid)).data.texts['body']?.extracted?.metadata?.metadata.paragraphs ?? [];
      const defaults = await paragraphsOf(plain.body.uuid);
      const small = await paragraphsOf(split.body.uuid);
      expect(defaults).toHaveLength(1);
      expect(small.length).toBeGreaterThanOrEqual(LONG.length / 200);
      for (const p of small) expect(p.end - p.start).toBeLessThanOrEqual(200);
      // The same strategy on a field written by PUT.
      const put = await http.call('PUT', `${path()}/resource/${plain.body.uuid}/text/body`, {
        credential: pat,
        body: { body: LONG, split_strategy: id },
      });
      expect(put.status).toBe(201);
      await http.eventually(
        async () => ((await paragraphsOf(plain.body.uuid)).length > 1 ? true : undefined),
        60_000,
        'the field processed again with the strategy',
      );
    });

    it('refuses a field naming a strategy the KB does not have, and writes nothing', async () => {
      const before = (await http.call<{ resources: unknown[] }>('GET', `${path()}/resources?size=100`, { credential: pat })).body.resources
        .length;
      const res = await http.call('POST', `${path()}/resources`, {
        credential: pat,
        body: { slug: `typo-${run}`, texts: { body: { body: 'x', split_strategy: '0'.repeat(32), extract_strategy: 'fast' } } },
      });
      expect([res.status, locs(res.body)]).toEqual([422, ['body.texts.body.extract_strategy', 'body.texts.body.split_strategy']]);
      expect((await http.call('GET', `${path()}/slug/typo-${run}`, { credential: pat })).status).toBe(404);
      expect(
        (await http.call<{ resources: unknown[] }>('GET', `${path()}/resources?size=100`, { credential: pat })).body.resources.length,
      ).toBe(before);
      // A strategy of another KB is unknown here too.
      const theirs = (
        await http.call<string>('POST', `${path(otherKb)}/split_strategies`, {
          credential: pat,
          body: { name: 'theirs', split: { max_paragraph: 100 } },
        })
      ).body;
      const rid = (await http.call<{ id: string }>('GET', `${path()}/slug/tides`, { credential: pat })).body.id;
      const put = await http.call('PUT', `${path()}/resource/${rid}/text/body`, {
        credential: pat,
        body: { body: 'x', split_strategy: theirs },
      });
      expect([put.status, locs(put.body)]).toEqual([422, ['body.split_strategy']]);
    });
  });
});
