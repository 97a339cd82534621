import { collectIssues } from '../../common/validation';
import { CatalogEnvelope, CatalogFacetsRequest, CatalogRequest } from './catalog.dto';
import { SearchRequest, SearchRequestEnvelope, SuggestRequest } from './search.dto';

const found = (cls: Parameters<typeof collectIssues>[0], body: unknown) =>
  collectIssues(cls, body, { loc: ['body'] }).issues.map((i) => [i.loc.join('.'), i.type]);

describe('SearchRequest', () => {
  it('takes the retrieval members with its own features, paging, facets and sort', () => {
    expect(
      found(SearchRequest, {
        query: 'q',
        features: ['fulltext', 'keyword'],
        faceted: ['/l/topic'],
        offset: 10,
        sort: { field: 'score' },
        filter_expression: { field: { prop: 'keyword', word: 'x' } },
      }),
    ).toEqual([]);
    expect(
      found(SearchRequest, {
        features: ['graph'],
        graph_query: {},
        offset: 1001,
        sort: { field: 'created' },
        faceted: Array(51).fill('/l'),
        page_number: 1,
      }),
    ).toEqual([
      ['body.features.0', 'enum'],
      ['body.graph_query', 'value_error'],
      ['body.faceted', 'too_long'],
      ['body.offset', 'less_than_equal'],
      ['body.sort.field', 'not_supported'],
      ['body.page_number', 'extra_forbidden'],
    ]);
  });

  it('is the /search bus payload, checked at the same locations', () => {
    expect(
      collectIssues(SearchRequestEnvelope, { kbid: 'k', body: { top_k: 'x', constructor: {} } }).issues.map((i) => i.loc.join('.')),
    ).toEqual(['body.top_k', 'body.constructor']);
  });
});

describe('SuggestRequest', () => {
  it('requires a query that is not blank and ignores top_k, as before', () => {
    expect(found(SuggestRequest, { query: 'Eur', features: ['entities'], top_k: 'anything', fields: ['a/title'] })).toEqual([]);
    expect(found(SuggestRequest, { query: '  ', features: ['keyword'] })).toEqual([
      ['body.query', 'missing'],
      ['body.features.0', 'enum'],
    ]);
    expect(found(SuggestRequest, {})).toEqual([['body.query', 'missing']]);
  });

  it('refuses members it does not declare (they were ignored)', () => {
    expect(found(SuggestRequest, { query: 'x', bogus: 1 })).toEqual([['body.bogus', 'extra_forbidden']]);
  });
});

describe('CatalogRequest', () => {
  it('accepts a title query or {field, match, query}, resource filters, sort and pages', () => {
    expect(
      found(CatalogRequest, {
        query: { field: 'slug', match: 'starts_with', query: 'doc-' },
        filter_expression: { resource: { prop: 'origin_tag', tag: 'x' } },
        sort: { field: 'title', order: 'asc' },
        page_number: 2,
        page_size: 50,
        hidden: false,
        with_status: 'PROCESSED',
        debug: true,
      }),
    ).toEqual([]);
  });

  it('reports every mistake at its location', () => {
    expect(
      found(CatalogRequest, {
        query: { field: 'slug', match: 'fuzzy', query: 'x' },
        filter_expression: { field: {}, resource: { prop: 'kind', kind: 'x' } },
        sort: { field: 'size', order: 'up' },
        page_size: 0,
        hidden: 'yes',
        with_status: 'DONE',
        fields: ['a/title'],
      }),
    ).toEqual([
      ['body.query.match', 'value_error'],
      ['body.filter_expression.field', 'extra_forbidden'],
      ['body.filter_expression.resource.prop', 'value_error'],
      ['body.sort.field', 'enum'],
      ['body.sort.order', 'enum'],
      ['body.page_size', 'greater_than_equal'],
      ['body.hidden', 'bool_type'],
      ['body.with_status', 'enum'],
      ['body.fields', 'extra_forbidden'],
    ]);
    expect(found(CatalogRequest, { query: 'w '.repeat(101) })).toEqual([['body.query', 'string_too_long']]);
    expect(
      collectIssues(CatalogEnvelope, {
        kbid: 'k',
        body: { filters: ['/l/a'], filter_expression: { resource: { prop: 'resource' } } },
      }).issues.map((i) => i.loc.join('.')),
    ).toEqual(['body.filter_expression.resource', 'body.filters']);
  });
});

describe('CatalogFacetsRequest', () => {
  it('needs a bounded list of {prefix, depth?}', () => {
    expect(found(CatalogFacetsRequest, { prefixes: [{ prefix: '/l', depth: 1 }] })).toEqual([]);
    expect(found(CatalogFacetsRequest, {})).toEqual([['body.prefixes', 'list_type']]);
    expect(found(CatalogFacetsRequest, { prefixes: [{ prefix: 1 }, { prefix: '/l', depth: -1 }] })).toEqual([
      ['body.prefixes.0', 'model_type'],
      ['body.prefixes.1.depth', 'int_type'],
    ]);
  });
});
