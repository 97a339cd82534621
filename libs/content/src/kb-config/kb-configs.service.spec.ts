import { mergeSearchBody } from './kb-configs.service';

describe('mergeSearchBody (search configurations)', () => {
  const saved = {
    query: 'tides',
    features: ['keyword'],
    top_k: 5,
    filter_expression: { field: { prop: 'label', labelset: 'topic', label: 'sea' } },
    rank_fusion: { name: 'rrf', k: 10 },
  };

  it('is the saved body when the request only names it', () => {
    expect(mergeSearchBody(saved, { search_configuration: 'x' })).toEqual(saved);
  });

  it("replaces saved members by the request's, whole (lists and objects are not merged), and keeps the rest", () => {
    const merged = mergeSearchBody(saved, {
      search_configuration: 'x',
      features: ['semantic'],
      rank_fusion: { name: 'rrf', window: 50 },
      filter_expression: { field: { prop: 'keyword', word: 'moon' } },
    });
    expect(merged).toEqual({
      query: 'tides',
      features: ['semantic'],
      top_k: 5,
      filter_expression: { field: { prop: 'keyword', word: 'moon' } },
      rank_fusion: { name: 'rrf', window: 50 },
    });
  });

  it('ignores members left undefined by validation, and never carries the name on', () => {
    const merged = mergeSearchBody(saved, { search_configuration: 'x', query: undefined, top_k: 1, highlight: false });
    expect(merged).toEqual({ ...saved, top_k: 1, highlight: false });
    expect('search_configuration' in merged).toBe(false);
  });
});
