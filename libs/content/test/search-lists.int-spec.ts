import { ContentSubjects, DomainError } from '@kb/contracts';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

interface Catalog {
  resources: Record<string, { title: string }>;
  fulltext: {
    results: { rid: string }[];
    total: number;
    page_number: number;
    page_size: number;
    next_page: boolean;
    facets: Record<string, Record<string, number>>;
  };
}

describe('/catalog, /search and /suggest', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000f1';
  const rids: Record<string, string> = {};

  beforeAll(async () => {
    fx = await startSearchFixture();
    const add = async (key: string, title: string, text: string, extra: Record<string, unknown> = {}, ner: Record<string, string> = {}) => {
      rids[key] = await fx.addResource(kbid, { title, ...extra }, text, { ner });
    };
    await add(
      'alpha',
      'Alpha report',
      'Quarterly revenue grew in Europe.\n\nEurope leads the growth.',
      { usermetadata: { classifications: [{ labelset: 'dept', label: 'sales' }] }, origin: { tags: ['q1'] } },
      { Europe: 'LOCATION' },
    );
    await add(
      'beta',
      'Beta memo',
      'Revenue fell in Asia.',
      { usermetadata: { classifications: [{ labelset: 'dept', label: 'finance' }] } },
      { Asia: 'LOCATION' },
    );
    await add('gamma', 'Gamma notes', 'Engineers shipped the release.', {
      usermetadata: { classifications: [{ labelset: 'dept', label: 'sales' }] },
      hidden: true,
    });
    // Without fields: searchable by its title at once, and PROCESSED from the start.
    const { uuid } = await fx.bus.request(ContentSubjects.createResource, { kbid, body: { title: 'Delta plan', slug: 'delta-plan' } });
    rids['delta'] = uuid;
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const catalog = (body: Record<string, unknown>) => fx.bus.request(ContentSubjects.catalog, { kbid, body }) as unknown as Promise<Catalog>;

  it('lists, sorts and pages resources, with facets that follow the filters', async () => {
    const all = await catalog({ sort: { field: 'title', order: 'asc' }, faceted: ['/l/dept'] });
    expect(all.fulltext.results.map((r) => all.resources[r.rid]?.title)).toEqual([
      'Alpha report',
      'Beta memo',
      'Delta plan',
      'Gamma notes',
    ]);
    expect(all.fulltext.facets['/l/dept']).toEqual({ '/l/dept/sales': 2, '/l/dept/finance': 1 });
    const page = await catalog({ sort: { field: 'title', order: 'desc' }, page_size: 2, page_number: 1 });
    expect(page.fulltext.results.map((r) => page.resources[r.rid]?.title)).toEqual(['Beta memo', 'Alpha report']);
    expect(page.fulltext).toMatchObject({ total: 4, page_number: 1, page_size: 2, next_page: false });
    const visible = await catalog({ hidden: false, filters: ['/l/dept/sales'] });
    expect(visible.fulltext.results.map((r) => r.rid)).toEqual([rids['alpha']]);
    const byQuery = await catalog({ query: 'memo' });
    expect(byQuery.fulltext.results.map((r) => r.rid)).toEqual([rids['beta']]);
    const bySlug = await catalog({ query: { field: 'slug', match: 'starts_with', query: 'delta' } });
    expect(bySlug.fulltext.results.map((r) => r.rid)).toEqual([rids['delta']]);
    const byStatus = await catalog({ with_status: 'PROCESSED', filter_expression: { resource: { prop: 'origin_tag', tag: 'q1' } } });
    expect(byStatus.fulltext.results.map((r) => r.rid)).toEqual([rids['alpha']]);
    const facets = (await fx.bus.request(ContentSubjects.catalogFacets, { kbid, body: { prefixes: [{ prefix: '/l/dept' }] } })) as {
      facets: Record<string, number>;
    };
    expect(facets.facets).toEqual({ '/l/dept/sales': 2, '/l/dept/finance': 1 });
  });

  it('refuses bad catalog requests with every problem named', async () => {
    const err = await catalog({
      sort: { field: 'score' },
      page_size: 500,
      with_status: 'DONE',
      query: { field: 'slug', match: 'fuzzy', query: 'x' },
      filter_expression: { field: { prop: 'label', labelset: 'dept' } },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    const locs = ((err as DomainError).details?.['detail'] as { loc: (string | number)[] }[]).map((d) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining(['body.sort.field', 'body.page_size', 'body.with_status', 'body.query.match', 'body.filter_expression.field']),
    );
  });

  it('/search returns paragraphs, fulltext and sentences lists with paragraph facets and offset paging', async () => {
    const res = (await fx.bus.request(ContentSubjects.search, {
      kbid,
      body: { query: 'revenue', faceted: ['/l/dept'], top_k: 1 },
    })) as unknown as Record<
      string,
      {
        results: { rid: string; field_type: string; field: string; labels?: string[] }[];
        facets?: Record<string, Record<string, number>>;
        total?: number;
        next_page?: boolean;
      }
    >;
    expect(res['paragraphs']?.results).toHaveLength(1);
    expect(res['paragraphs']?.results[0]).toMatchObject({ field_type: 't', field: 'body' });
    expect(res['paragraphs']?.total).toBe(2);
    expect(res['paragraphs']?.next_page).toBe(true);
    expect(res['paragraphs']?.facets?.['/l/dept']).toEqual({ '/l/dept/finance': 1, '/l/dept/sales': 1 });
    expect(res['fulltext']?.results[0]?.labels?.[0]).toMatch(/^dept\//);
    const next = (await fx.bus.request(ContentSubjects.search, {
      kbid,
      body: { query: 'revenue', features: ['keyword'], top_k: 1, offset: 1 },
    })) as unknown as Record<string, { results: { rid: string }[] }>;
    expect(next['paragraphs']?.results[0]?.rid).not.toBe(res['paragraphs']?.results[0]?.rid);
    expect(next['fulltext']).toBeUndefined();
  });

  it('/suggest completes the word being typed and suggests entities', async () => {
    const res = (await fx.bus.request(ContentSubjects.suggest, { kbid, body: { query: 'Eur' } })) as unknown as {
      paragraphs: { results: { rid: string }[] };
      entities: { entities: { family: string; value: string }[] };
    };
    expect(res.paragraphs.results.map((r) => r.rid)).toContain(rids['alpha']);
    expect(res.entities.entities).toEqual([{ family: 'LOCATION', value: 'Europe' }]);
    await expect(fx.bus.request(ContentSubjects.suggest, { kbid, body: {} })).rejects.toBeInstanceOf(DomainError);
  });

  it('finds a resource without fields by its title', async () => {
    const res = (await fx.bus.request(ContentSubjects.find, { kbid, body: { query: 'delta plan', features: ['keyword'] } })) as {
      best_matches: string[];
    };
    expect(res.best_matches[0]).toBe(`${rids['delta']}/a/title/0-10`);
  });
});
