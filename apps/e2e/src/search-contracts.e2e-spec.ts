import { apiKey, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

type Detail = { detail: { loc: (string | number)[]; type: string }[] };

/**
 * The search and ask routes validate their bodies with the DTOs of libs/contracts at the edge
 * (decision 0022): one 422 with every mistake at its path, GET queries at `query`, undeclared members
 * refused; and the served OpenAPI document describes those bodies, parameters and the NDJSON stream.
 */
describe('search and ask contracts over HTTP', () => {
  let topology: Topology;
  let http: HttpClient;
  let kbid: string;
  let key: ReturnType<typeof apiKey>;
  const locs = (body: Detail) => body.detail.map((d) => d.loc.join('.'));

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kbid}/resources`, {
          credential: key,
          body: { title: 'Tides', texts: { body: { body: 'Spring tides follow the moon.' } } },
        })
      ).status,
    ).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  });

  it('answers a /find with mistakes at the top and deep in its filter expression with one 422 listing them all', async () => {
    const res = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/find`, {
      credential: key,
      body: {
        query: 5,
        top_k: 0,
        features: ['keyword', 'vector'],
        filter_expression: { field: { and: [{ prop: 'label' }, { not: { prop: 'created', since: 'soon' } }] } },
        reranker: { name: 'predict', window: 500 },
        bogus: true,
      },
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([
      'body.query',
      'body.features.1',
      'body.top_k',
      'body.reranker.window',
      'body.filter_expression.field.and.0.labelset',
      'body.filter_expression.field.and.1.not.since',
      'body.bogus',
    ]);
  });

  it("reports a GET query's mistakes at `query`, and answers a good one", async () => {
    const bad = await http.call<Detail>('GET', `/api/v1/kb/${kbid}/find?query=tides&top_k=abc&features=keyword,nope&debug=maybe`, {
      credential: key,
    });
    expect([bad.status, locs(bad.body)]).toEqual([422, ['query.features.1', 'query.top_k', 'query.debug']]);
    const good = await http.call<{ best_matches: string[] }>('GET', `/api/v1/kb/${kbid}/find?query=tides&features=keyword`, {
      credential: key,
    });
    expect(good.status).toBe(200);
    const catalog = await http.call<Detail>('GET', `/api/v1/kb/${kbid}/catalog?page_size=0&sort_field=size`, { credential: key });
    expect([catalog.status, locs(catalog.body)]).toEqual([422, ['query.sort.field', 'query.page_size']]);
  });

  it('/retrieve, /hydrate and /augment: paragraph ids with scores, then their text, for a reader; one 422 with every mistake; 401 without a credential', async () => {
    type Retrieved = {
      matches: { id: string; score: { value: number; source: string; type: string }; metadata: { page: number | null } }[];
    };
    // (the resource above is processed in the background: asked until its body is indexed)
    const ask = (body: Record<string, unknown>) => http.call<Retrieved>('POST', `/api/v1/kb/${kbid}/retrieve`, { credential: key, body });
    const keyword = { query: { keyword: { query: 'spring' } }, top_k: 1, reranker: 'predict' };
    let raw = await ask(keyword);
    for (let i = 0; i < 120 && raw.status === 200 && raw.body.matches.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      raw = await ask(keyword);
    }
    expect([raw.status, raw.body.matches.length, raw.body.matches[0]?.score.type]).toEqual([200, 1, 'reranker']);
    const good = await ask({ query: { query: 'spring tides' } });
    expect(good.status).toBe(200);
    expect(good.body.matches.length).toBeGreaterThan(0);
    expect(good.body.matches[0]?.score).toMatchObject({ source: expect.any(String), type: expect.any(String) });
    const bad = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/retrieve`, {
      credential: key,
      body: {
        query: { query: 'x', override: { keyword: 'disabled', semantic: 'disabled' } },
        top_k: 1000,
        filters: { security: { groups: 'sales' }, filter_expression: { field: { prop: 'label' } } },
        bogus: 1,
      },
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual([
      'body.query.override',
      'body.top_k',
      'body.filters.filter_expression.field.labelset',
      'body.filters.security.groups',
      'body.bogus',
    ]);
    expect((await http.call('POST', `/api/v1/kb/${kbid}/retrieve`, { body: { query: { query: 'x' } } })).status).toBe(401);
    // /hydrate: the retrieved paragraph's text and its resource's title; bad ids 422; no credential 401.
    const id = raw.body.matches[0]?.id as string;
    const hydrated = await http.call<{ resources: Record<string, { title?: string }>; paragraphs: Record<string, { text?: string }> }>(
      'POST',
      `/api/v1/kb/${kbid}/hydrate`,
      { credential: key, body: { data: [id] } },
    );
    expect(hydrated.status).toBe(200);
    expect(hydrated.body.paragraphs[id]?.text).toContain('Spring tides');
    expect(Object.values(hydrated.body.resources)).toEqual([{ title: 'Tides' }]);
    const badIds = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/hydrate`, {
      credential: key,
      body: { data: [id, 'nope'], hydration: { paragraph: { related: { neighbours: { after: 99 } } } } },
    });
    expect([badIds.status, locs(badIds.body)]).toEqual([422, ['body.data.1', 'body.hydration.paragraph.related.neighbours.after']]);
    expect((await http.call('POST', `/api/v1/kb/${kbid}/hydrate`, { body: { data: [id] } })).status).toBe(401);
    // /augment: the same paragraph, its field's text and its resource's title; unknown ids absent; bad input 422; 401.
    type Augmented = {
      resources: Record<string, { id: string; title?: string }>;
      fields: Record<string, { text?: string }>;
      paragraphs: Record<string, { text?: string; neighbours_after?: string[] }>;
    };
    const rid = id.split('/')[0] as string;
    const field = id.split('/').slice(0, 3).join('/');
    const augmentBody = (r: string) => ({
      resources: [{ given: [r], title: true }],
      fields: [{ given: [`${r}${field.slice(rid.length)}`], text: true }],
      paragraphs: [{ given: [{ id: `${r}${id.slice(rid.length)}` }], neighbours_after: 2 }],
    });
    const augmented = await http.call<Augmented>('POST', `/api/v1/kb/${kbid}/augment`, { credential: key, body: augmentBody(rid) });
    expect(augmented.status).toBe(200);
    expect(augmented.body.resources).toEqual({ [rid]: { id: rid, title: 'Tides' } });
    expect(augmented.body.fields[field]?.text).toContain('Spring tides');
    expect(augmented.body.paragraphs[id]).toMatchObject({ text: expect.stringContaining('Spring tides'), neighbours_after: [] });
    const unknown = await http.call<Augmented>('POST', `/api/v1/kb/${kbid}/augment`, {
      credential: key,
      body: augmentBody('0f3c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b'),
    });
    expect([unknown.status, unknown.body]).toEqual([200, { resources: {}, fields: {}, paragraphs: {} }]);
    const badAugment = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/augment`, {
      credential: key,
      body: {
        resources: [{ given: ['nope'] }],
        paragraphs: [{ given: [{ id }], neighbours_before: 11 }, { given: Array.from({ length: 100 }, () => ({ id })) }],
        extra: 1,
      },
    });
    expect([badAugment.status, locs(badAugment.body)]).toEqual([
      422,
      ['body.resources.0.given.0', 'body.paragraphs.0.neighbours_before', 'body', 'body.extra'],
    ]);
    expect((await http.call('POST', `/api/v1/kb/${kbid}/augment`, { body: augmentBody(rid) })).status).toBe(401);
  });

  it('refuses a member /suggest does not declare (it was ignored before)', async () => {
    const res = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/suggest`, { credential: key, body: { query: 'tid', whatever: 1 } });
    expect([res.status, locs(res.body)]).toEqual([422, ['body.whatever']]);
    expect((await http.call('POST', `/api/v1/kb/${kbid}/suggest`, { credential: key, body: { query: 'tid' } })).status).toBe(200);
  });

  it("checks an /ask prequery's request where it is, before streaming", async () => {
    const res = await http.call<Detail>('POST', `/api/v1/kb/${kbid}/ask`, {
      credential: key,
      body: {
        query: 'tides?',
        rag_strategies: [{ name: 'prequeries', queries: [{ request: { query: 'moon', top_k: 1000, answer: 'x' } }] }],
      },
    });
    expect([res.status, locs(res.body)]).toEqual([
      422,
      ['body.rag_strategies.0.queries.0.request.top_k', 'body.rag_strategies.0.queries.0.request.answer'],
    ]);
  });

  it('serves an OpenAPI document with the bodies, the GET parameters, the 422 body and the NDJSON items', async () => {
    type Doc = {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string }[];
            requestBody?: unknown;
            responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }>;
          }
        >
      >;
      components: { schemas: Record<string, unknown> };
    };
    const doc = (await http.call<Doc>('GET', '/api/openapi.json')).body;
    const find = doc.paths['/api/v1/kb/{kbid}/find'];
    expect(JSON.stringify(find?.['post']?.requestBody)).toContain('#/components/schemas/FindRequest');
    expect(find?.['get']?.parameters?.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(
      expect.arrayContaining(['query', 'features', 'top_k', 'filter_expression', 'show', 'field_type', 'extracted', 'security_groups']),
    );
    expect(find?.['post']?.responses['422']?.content?.['application/json']?.schema.$ref).toBe(
      '#/components/schemas/ValidationErrorResponse',
    );
    const ask = doc.paths['/api/v1/kb/{kbid}/ask']?.['post'];
    expect(ask?.responses['200']?.content?.['application/x-ndjson']?.schema.$ref).toBe('#/components/schemas/AskStreamLine');
    expect(ask?.responses['200']?.content?.['application/json']?.schema.$ref).toBe('#/components/schemas/SyncAskResponse');
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'SearchRequest',
        'SuggestRequest',
        'CatalogRequest',
        'AskRequest',
        'AskRetrievalItem',
        'AskCitationsItem',
        'FindResponse',
      ]),
    );
    expect(doc.paths['/api/v1/kb/{kbid}/resource/{rid}']?.['get']?.parameters?.filter((p) => p.in === 'query').map((p) => p.name)).toEqual([
      'show',
      'field_type',
      'extracted',
    ]);
    expect(doc.paths['/api/v1/kb/{kbid}/resources']?.['get']?.parameters?.filter((p) => p.in === 'query').map((p) => p.name)).toEqual([
      'page',
      'size',
      'show_hidden',
    ]);
  });
});
