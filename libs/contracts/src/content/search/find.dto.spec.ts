import { collectIssues } from '../../common/validation';
import { FindEnvelope, FindRequest } from './find.dto';

const issuesOf = (body: unknown) => collectIssues(FindRequest, body, { loc: ['body'] }).issues;
const locs = (body: unknown) => issuesOf(body).map((i) => i.loc.join('.'));

describe('FindRequest', () => {
  it('accepts a typical body and keeps its members as sent', () => {
    const body = {
      query: 'tides',
      features: ['keyword', 'semantic'],
      top_k: 10,
      min_score: { semantic: 0.2, bm25: 0 },
      rank_fusion: { name: 'rrf', k: 60, window: 100, boosting: { keyword: 1, semantic: 2 } },
      reranker: { name: 'predict', window: 20 },
      show: ['basic', 'values'],
      security: { groups: ['g'] },
      highlight: true,
      rephrase: false,
      filter_expression: {
        field: {
          and: [
            { prop: 'label', labelset: 'topic', label: 'sea' },
            { not: { prop: 'resource', id: '00000000-0000-4000-8000-000000000001' } },
          ],
        },
        paragraph: { prop: 'kind', kind: 'TABLE' },
        operator: 'or',
      },
      fields: ['t/body', 'a'],
      range_creation_start: '2024-01-01T00:00:00Z',
      audit_metadata: { team: 'x' },
    };
    const { value, issues } = collectIssues(FindRequest, body, { loc: ['body'] });
    expect(issues).toEqual([]);
    expect({ ...value }).toEqual(body);
    expect(value).toBeInstanceOf(FindRequest);
  });

  it('reports every mistake at once, each at its location, with the types clients know', () => {
    const issues = issuesOf({
      query: 5,
      top_k: 500,
      features: ['keyword', 'graph', {}, 'nope'],
      bogus: 1,
      min_score: { semantic: 'x', other: 1 },
      rank_fusion: { name: 'x', window: 0 },
      reranker: { name: 'predict', window: 1 },
      security: { groups: [1] },
      rephrase: 'yes',
      rephrase_prompt: 'Rewrite it',
      search_after: 'c',
      range_creation_end: 'yesterday',
      filter_expression: {
        field: { and: [{ prop: 'nope' }, { prop: 'resource' }, { prop: 'field', type: 'pdf' }] },
        resource: {},
        key_value: {},
      },
      filters: ['/l/x'],
      fields: ['???'],
      show: ['everything'],
    });
    expect(issues.map((i) => [i.loc.join('.'), i.type])).toEqual([
      ['body.query', 'string_type'],
      ['body.features.2', 'string_type'],
      ['body.features.3', 'enum'],
      ['body.graph_query', 'missing'],
      ['body.top_k', 'less_than_equal'],
      ['body.min_score.other', 'extra_forbidden'],
      ['body.min_score.semantic', 'float_type'],
      ['body.rank_fusion.name', 'enum'],
      ['body.rank_fusion.window', 'less_than_equal'],
      ['body.reranker.window', 'value_error'],
      ['body.security.groups', 'list_type'],
      ['body.show.0', 'enum'],
      ['body.rephrase', 'bool_type'],
      ['body.rephrase_prompt', 'value_error'],
      ['body.search_after', 'not_supported'],
      ['body.filter_expression.field.and.0.prop', 'union_tag_invalid'],
      ['body.filter_expression.field.and.1', 'value_error'],
      ['body.filter_expression.field.and.2.type', 'enum'],
      ['body.filter_expression.resource', 'extra_forbidden'],
      ['body.filter_expression.key_value.schema_id', 'missing'],
      ['body.filter_expression.key_value.key', 'missing'],
      ['body.filter_expression.key_value', 'value_error'],
      ['body.filters', 'value_error'],
      ['body.fields.0', 'value_error'],
      ['body.range_creation_end', 'datetime_parsing'],
      ['body.bogus', 'extra_forbidden'],
    ]);
    expect(issues.find((i) => i.loc.join('.') === 'body.reranker.window')?.msg).toBe(
      'Input should be an integer between top_k (20) and 200',
    );
  });

  it('accepts rephrasing with a prompt that places the question, bounded', () => {
    expect(
      locs({ query: 'tides', rephrase: true, rephrase_prompt: 'Rewrite for search: {question}', generative_model: 'chatgpt-4o-mini' }),
    ).toEqual([]);
    expect(
      issuesOf({ rephrase_prompt: `{question}${'x'.repeat(10_000)}`, generative_model: 3 }).map((i) => [i.loc.join('.'), i.type]),
    ).toEqual([
      ['body.rephrase_prompt', 'string_too_long'],
      ['body.generative_model', 'string_type'],
    ]);
  });

  it('relates the graph feature and graph_query', () => {
    expect(locs({ features: ['graph'], graph_query: { prop: 'path' } })).toEqual([]);
    expect(locs({ graph_query: { prop: 'path' } })).toEqual(['body.graph_query']);
    expect(locs({ features: ['graph', 'relations'], graph_query: { prop: 'path' } })).toEqual(['body.features']);
    expect(locs({ features: [], graph_query: {} })).toEqual(['body.graph_query']);
    // The query itself is checked with the rest of the body, every problem at its path.
    expect(
      issuesOf({
        top_k: 0,
        features: ['graph'],
        graph_query: {
          and: [
            { prop: 'path', source: { value: 1, match: 'fuzzy' } },
            { prop: 'node', type: 'planet' },
          ],
        },
      }).map((i) => [i.loc.join('.'), i.type]),
    ).toEqual([
      ['body.graph_query.and.0.source.value', 'string_type'],
      ['body.graph_query.and.0.source', 'value_error'],
      ['body.graph_query.and.1.type', 'enum'],
      ['body.top_k', 'greater_than_equal'],
    ]);
  });

  it('bounds lists and expressions before walking them', () => {
    expect(issuesOf({ features: Array(21).fill('keyword') }).map((i) => i.type)).toEqual(['too_long']);
    expect(issuesOf({ resource_filters: Array(101).fill('x') }).map((i) => i.type)).toEqual(['too_long']);
    let deep: unknown = { prop: 'origin_tag', tag: 'x' };
    for (let i = 0; i < 20; i++) deep = { not: deep };
    expect(issuesOf({ filter_expression: { field: deep } }).map((i) => [i.loc.join('.'), i.type])).toEqual([
      ['body.filter_expression', 'too_deep'],
    ]);
    const wide = { or: Array.from({ length: 1_001 }, () => ({ prop: 'origin_tag', tag: 'x' })) };
    expect(issuesOf({ filter_expression: { field: wide } }).map((i) => i.type)).toEqual(['too_long']);
  });

  it('is checked where the bus subject carries it, at the same locations', () => {
    const { issues } = collectIssues(FindEnvelope, {
      kbid: 'k',
      body: { top_k: 0, bogus: true, filter_expression: { paragraph: { prop: 'kind' } } },
    });
    expect(issues.map((i) => i.loc.join('.'))).toEqual(['body.top_k', 'body.filter_expression.paragraph.kind', 'body.bogus']);
    expect(collectIssues(FindEnvelope, { kbid: 'k', body: [] }).issues.map((i) => i.loc.join('.'))).toEqual(['body']);
  });
});
