import { ContentSubjects, type HydrateRequest, type RetrieveRequest } from '@kb/contracts';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Match = { id: string; score: { value: number; source: string; type: string; history: unknown[] }; metadata: Record<string, unknown> };

describe('/retrieve (retrieval only)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000a7';
  let tides = '';
  let hidden = '';

  beforeAll(async () => {
    fx = await startSearchFixture();
    tides = await fx.addResource(kbid, { title: 'Tides' }, 'The moon pulls the oceans and makes the tides rise and fall twice a day.');
    await fx.addResource(kbid, { title: 'Volcanoes' }, 'Lava flows from volcanoes when magma reaches the surface of the earth.');
    hidden = await fx.addResource(kbid, { title: 'Secret tides', hidden: true }, 'Hidden notes on tides and the moon.');
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
  });

  const retrieve = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.retrieve, { kbid, body: body as unknown as RetrieveRequest }) as unknown as Promise<{
      matches: Match[];
    }>;

  it('answers paragraph ids, scores and metadata for a text query, best first', async () => {
    const r = await retrieve({ query: { query: 'moon tides' }, top_k: 5 });
    expect(r.matches.length).toBeGreaterThan(0);
    const first = r.matches[0] as Match;
    expect(first.id.startsWith(`${tides}/`)).toBe(true);
    expect(first.score.history).toHaveLength(1);
    expect(first.score.source).toBe('rank_fusion');
    expect(first.metadata).toMatchObject({ is_a_table: false, is_an_image: false, source_file: null });
    expect(r.matches.some((m) => m.id.startsWith(`${hidden}/`))).toBe(false);
  });

  it('keyword only: index scores, keyword type, no reranker unless asked', async () => {
    const r = await retrieve({ query: { query: 'lava', override: { semantic: 'disabled' } } });
    expect(r.matches.length).toBeGreaterThan(0);
    for (const m of r.matches) expect(m.score).toMatchObject({ source: 'index', type: 'keyword' });
    const reranked = await retrieve({ query: { keyword: { query: 'lava' } }, reranker: 'predict' });
    expect((reranked.matches[0] as Match).score).toMatchObject({ source: 'reranker', type: 'reranker' });
    const one = await retrieve({ query: { keyword: { query: 'tides' } }, top_k: 1, reranker: 'predict' });
    expect(one.matches.map((m) => [m.id.split('/')[0], m.score.type])).toEqual([[tides, 'reranker']]);
  });

  it('hidden resources only with filters.show_hidden; filter expressions hold', async () => {
    const shown = await retrieve({ query: { keyword: { query: 'tides' } }, filters: { show_hidden: true } });
    expect(shown.matches.some((m) => m.id.startsWith(`${hidden}/`))).toBe(true);
    const only = await retrieve({
      query: { keyword: { query: 'tides' } },
      filters: { show_hidden: true, filter_expression: { field: { prop: 'resource', id: tides } } },
    });
    expect(only.matches.length).toBeGreaterThan(0);
    expect(only.matches.every((m) => m.id.startsWith(`${tides}/`))).toBe(true);
  });

  it('/hydrate: the neighbours of several paragraphs of one field, each within its own window', async () => {
    const seasons = await fx.addResource(
      kbid,
      { title: 'Seasons' },
      ['Spring brings rain.', 'Summer brings heat.', 'Autumn brings wind.', 'Winter brings snow.', 'Then spring returns.'].join('\n\n'),
    );
    const rows = (await fx.ds.query(
      `SELECT paragraph_id, idx FROM content.search_paragraphs WHERE kbid = $1 AND rid = $2 AND field = 't/body' ORDER BY idx`,
      [kbid, seasons],
    )) as { paragraph_id: string; idx: number }[];
    expect(rows).toHaveLength(5);
    const id = (i: number) => (rows[i] as { paragraph_id: string }).paragraph_id;
    const r = (await fx.bus.request(ContentSubjects.hydrate, {
      kbid,
      body: {
        data: [id(3), id(1)],
        hydration: { paragraph: { related: { neighbours: { before: 1, after: 1 } } } },
      } as unknown as HydrateRequest,
    })) as unknown as { paragraphs: Record<string, { text?: string; related?: { neighbours: { before: string[]; after: string[] } } }> };
    expect(r.paragraphs[id(1)]?.related?.neighbours).toEqual({ before: [id(0)], after: [id(2)] });
    expect(r.paragraphs[id(3)]?.related?.neighbours).toEqual({ before: [id(2)], after: [id(4)] });
    expect(Object.keys(r.paragraphs).sort()).toEqual([0, 1, 2, 3, 4].map(id).sort());
    expect(r.paragraphs[id(4)]?.text).toBe('Then spring returns.');
    const wide = (await fx.bus.request(ContentSubjects.hydrate, {
      kbid,
      body: { data: [id(0)], hydration: { paragraph: { related: { neighbours: { before: 3, after: 2 } } } } } as unknown as HydrateRequest,
    })) as unknown as { paragraphs: Record<string, { related?: { neighbours: { before: string[]; after: string[] } } }> };
    expect(wide.paragraphs[id(0)]?.related?.neighbours).toEqual({ before: [], after: [id(1), id(2)] });
  });

  it('/hydrate: text, titles and neighbours of given ids; hidden and unknown ids left out; bad input 422', async () => {
    const hydrate = (body: Record<string, unknown>) =>
      fx.bus.request(ContentSubjects.hydrate, { kbid, body: body as unknown as HydrateRequest }) as unknown as Promise<{
        resources: Record<string, { title?: string; summary?: string }>;
        paragraphs: Record<
          string,
          { id: string; resource: string; field: string; text?: string; related?: { neighbours: Record<string, string[]> } }
        >;
      }>;
    const ids = (await retrieve({ query: { keyword: { query: 'tides moon' } }, filters: { show_hidden: true } })).matches.map((m) => m.id);
    const body = ids.find((id) => id.startsWith(`${tides}/t/`)) as string;
    const secret = ids.find((id) => id.startsWith(`${hidden}/t/`)) as string;
    expect([body, secret].every(Boolean)).toBe(true);
    const unknown = `${tides}/t/body/900-910`;
    const r = await hydrate({
      data: [body, secret, unknown],
      hydration: { resource: { summary: true }, paragraph: { related: { neighbours: { before: 1, after: 1 } } } },
    });
    expect(Object.keys(r.paragraphs).sort()).toEqual([body].concat(r.paragraphs[body]?.related?.neighbours['after'] ?? []).sort());
    expect(r.paragraphs[body]).toMatchObject({ resource: tides, field: `${tides}/t/body`, text: expect.stringContaining('moon') });
    expect(r.paragraphs[body]?.related?.neighbours).toEqual({ before: [], after: [] });
    expect(r.resources).toEqual({ [tides]: { title: 'Tides', summary: expect.any(String) } });
    const shown = await hydrate({
      data: [secret.replace(/-/g, '').replace(/\/.*$/, '') + secret.slice(secret.indexOf('/'))],
      show_hidden: true,
      hydration: { paragraph: { text: false } },
    });
    expect(Object.values(shown.paragraphs)).toEqual([{ id: secret, resource: hidden, field: `${hidden}/t/body` }]);
    const bad = (b: Record<string, unknown>, loc: unknown[]) =>
      expect(hydrate(b)).rejects.toMatchObject({ details: { detail: [expect.objectContaining({ loc })] } });
    await bad({}, ['body', 'data']);
    await bad({ data: [] }, ['body', 'data']);
    await bad({ data: Array.from({ length: 51 }, () => body) }, ['body', 'data']);
    await bad({ data: ['not-an-id'] }, ['body', 'data', 0]);
    await bad({ data: [body], hydration: { paragraph: { related: { neighbours: { before: 11 } } } } }, [
      'body',
      'hydration',
      'paragraph',
      'related',
      'neighbours',
      'before',
    ]);
    await bad({ data: [body], hydration: { field: { text: { value: true } } } }, ['body', 'hydration', 'field']);
  });

  it('refuses bad requests with the locations of the mistakes', async () => {
    const bad = (body: Record<string, unknown>, loc: unknown[]) =>
      expect(retrieve(body)).rejects.toMatchObject({ details: { detail: [expect.objectContaining({ loc })] } });
    await bad({}, ['body', 'query']);
    await bad({ query: { query: 'x', override: { keyword: 'disabled', semantic: 'disabled' } } }, ['body', 'query', 'override']);
    await bad({ query: {} }, ['body', 'query']);
    await bad({ query: { query: 'x' }, top_k: 201 }, ['body', 'top_k']);
    await bad({ query: { query: 'x', rephrase: true } }, ['body', 'query', 'rephrase']);
    await bad({ query: { query: 'x' }, extra: 1 }, ['body', 'extra']);
    await bad({ query: { semantic: { query: [], vectorset: 'v' } } }, ['body', 'query', 'semantic', 'query']);
    await bad({ query: { keyword: { query: 'x' } }, filters: { filter_expression: { field: { prop: 'nope' } } } }, [
      'body',
      'filters',
      'filter_expression',
      'field',
      'prop',
    ]);
  });
});
