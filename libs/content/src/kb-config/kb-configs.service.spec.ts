import { DomainError } from '@kb/contracts';
import { checkArchivedKbConfig, mergeSearchBody } from './kb-configs.service';

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

describe('checkArchivedKbConfig (export archives)', () => {
  const id = 'a'.repeat(32);

  it('gives each kind in its stored form', () => {
    expect(checkArchivedKbConfig({ kind: 'search', id: 'icy', body: { kind: 'find', config: { top_k: 2 } } })).toEqual({
      kind: 'search',
      id: 'icy',
      body: { kind: 'find', config: { top_k: 2 } },
    });
    expect(
      checkArchivedKbConfig({ kind: 'kv_schema', id: 'survey', body: { name: 'survey', fields: [{ key: 'depth', type: 'float' }] } }),
    ).toEqual({
      kind: 'kv_schema',
      id: 'survey',
      body: { name: 'survey', description: '', fields: [{ key: 'depth', type: 'float', description: '', required: true, range: false }] },
    });
    expect(checkArchivedKbConfig({ kind: 'split', id, body: { name: 's', max_paragraph: 300 } })).toEqual({
      kind: 'split',
      id,
      body: { name: 's', split: { max_paragraph: 300 } },
    });
    expect(checkArchivedKbConfig({ kind: 'extract', id, body: { name: 'e', ocr: false } })).toEqual({
      kind: 'extract',
      id,
      body: { name: 'e', ocr: false },
    });
  });

  it('refuses what its route refuses, unknown kinds and members, and ids that are not of their kind', () => {
    const bad = [
      null,
      [],
      { kind: 'agents', id: 'x', body: {} },
      { kind: 'search', id: 'icy', body: { kind: 'find', config: {} }, extra: 1 },
      { kind: 'search', id: 'a/b', body: { kind: 'find', config: {} } },
      { kind: 'search', id: 'icy', body: { kind: 'find', config: { top_k: 0 } } },
      { kind: 'kv_schema', id: 'one', body: { name: 'other' } },
      { kind: 'split', id: '../x', body: { name: 's', max_paragraph: 300 } },
      { kind: 'split', id, body: { name: 's', max_paragraph: 300, custom_split: 2 } },
      { kind: 'extract', id, body: { name: 'e', vllm_config: {} } },
      { kind: 'extract', id: 7, body: { name: 'e' } },
    ];
    for (const line of bad) expect(() => checkArchivedKbConfig(line)).toThrow(DomainError);
  });
});
