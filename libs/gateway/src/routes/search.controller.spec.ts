import { queryToBody } from './search.controller';

describe('queryToBody (GET search routes → the POST body shape)', () => {
  it('keeps single-valued members single, and lists lists', () => {
    expect(queryToBody({ with_status: 'PENDING', page_size: '1', features: 'keyword,semantic', show_hidden: 'true' })).toEqual({
      with_status: 'PENDING', page_size: 1, features: ['keyword', 'semantic'], show_hidden: true,
    });
  });

  it('renames members to their body names', () => {
    expect(queryToBody({ security_groups: ['a', 'b'], field_type: 'text', min_score_bm25: '0.5', min_score: '0.2', sort_field: 'created', sort_order: 'desc' })).toEqual({
      security: { groups: ['a', 'b'] }, field_type_filter: ['text'], min_score: { semantic: 0.2, bm25: 0.5 }, sort: { field: 'created', order: 'desc' },
    });
  });

  it('reports a filter_expression that is not JSON', () => {
    expect(() => queryToBody({ filter_expression: '{nope' })).toThrow(/filter_expression/);
  });
});
