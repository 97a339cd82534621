import { queryToBody, resourceSearchBody } from './search.controller';

describe('queryToBody (GET search routes → the POST body shape)', () => {
  it('keeps single-valued members single, and lists lists', () => {
    expect(queryToBody({ with_status: 'PENDING', page_size: '1', features: 'keyword,semantic', show_hidden: 'true' })).toEqual({
      with_status: 'PENDING',
      page_size: 1,
      features: ['keyword', 'semantic'],
      show_hidden: true,
    });
  });

  it('renames members to their body names', () => {
    expect(
      queryToBody({
        security_groups: ['a', 'b'],
        field_type: 'text',
        min_score_bm25: '0.5',
        min_score: '0.2',
        sort_field: 'created',
        sort_order: 'desc',
      }),
    ).toEqual({
      security: { groups: ['a', 'b'] },
      field_type_filter: ['text'],
      min_score: { semantic: 0.2, bm25: 0.5 },
      sort: { field: 'created', order: 'desc' },
    });
  });

  it('reports a filter_expression that is not JSON', () => {
    expect(() => queryToBody({ filter_expression: '{nope' })).toThrow(/filter_expression/);
  });
});

describe('resourceSearchBody (GET /resource/{rid}/search → a /search body scoped to the resource)', () => {
  it('scopes to the resource, searches paragraphs by default, and turns pages into top_k and offset', () => {
    expect(resourceSearchBody({ query: 'lava', page_size: '5', page_number: '2' }, 'r1')).toEqual({
      features: ['keyword'],
      query: 'lava',
      top_k: 5,
      offset: 10,
      resource_filters: ['r1'],
    });
    expect(resourceSearchBody({ query: 'lava', page_number: '1' }, 'r1')).toMatchObject({ offset: 20 });
    expect(resourceSearchBody({ query: 'lava', features: 'semantic' }, 'r1')).toEqual({
      features: ['semantic'],
      query: 'lava',
      resource_filters: ['r1'],
    });
  });

  it("refuses resource_filters (the resource is the path's), and passes bad numbers on for the engine to name", () => {
    expect(() => resourceSearchBody({ resource_filters: 'other' }, 'r1')).toThrow(/resource is the one in the path/);
    expect(resourceSearchBody({ page_size: 'x' }, 'r1')).toMatchObject({ top_k: 'x' });
  });
});
