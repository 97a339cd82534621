import { collectIssues } from '../../common/validation';
import { FeedbackEnvelope, FeedbackRequest } from './feedback.dto';
import { GraphNodesRequest, GraphPathsEnvelope, GraphPathsRequest, GraphRelationsRequest } from './graph.dto';

const found = (cls: Parameters<typeof collectIssues>[0], body: unknown) =>
  collectIssues(cls, body, { loc: ['body'] }).issues.map((i) => [i.loc.join('.'), i.type]);

describe('graph requests', () => {
  it('take a path query with its members, bounded top_k, field filters, security and show_hidden', () => {
    const body = {
      query: {
        and: [
          { prop: 'path', source: { value: 'Marie Curie', group: 'PERSON' }, undirected: true },
          { not: { prop: 'generated', by: 'processor' } },
        ],
      },
      top_k: 20,
      filter_expression: { field: { prop: 'resource', id: 'r1' } },
      security: { groups: ['g'] },
      show_hidden: true,
    };
    expect(found(GraphPathsRequest, body)).toEqual([]);
  });

  it('report every mistake at its path: the query (by route), top_k, filters and undeclared members', () => {
    expect(
      found(GraphPathsRequest, { top_k: 501, filter_expression: { paragraph: {}, operator: 'and' }, show_hidden: 'yes', bogus: 1 }),
    ).toEqual([
      ['body.top_k', 'less_than_equal'],
      ['body.filter_expression.paragraph', 'extra_forbidden'],
      ['body.filter_expression.operator', 'extra_forbidden'],
      ['body.show_hidden', 'bool_type'],
      ['body.query', 'missing'],
      ['body.bogus', 'extra_forbidden'],
    ]);
    expect(found(GraphNodesRequest, { query: { prop: 'relation', type: 'ENTITY' } })).toEqual([['body.query', 'union_tag_invalid']]);
    expect(found(GraphRelationsRequest, { query: { prop: 'relation', type: 'ENEMY' } })).toEqual([['body.query.type', 'enum']]);
    expect(found(GraphNodesRequest, { query: { or: [{ prop: 'node', value: 'ab', match: 'fuzzy' }] } })).toEqual([
      ['body.query.or.0', 'value_error'],
    ]);
  });

  it('are the graph bus payloads, checked at the same locations', () => {
    expect(
      collectIssues(GraphPathsEnvelope, { kbid: 'k', body: { query: { prop: 'path', undirected: 'x' } } }).issues.map((i) =>
        i.loc.join('.'),
      ),
    ).toEqual(['body.query.undirected']);
  });
});

describe('FeedbackRequest', () => {
  it('requires the learning id and a boolean verdict; bounds the comment; refuses other members', () => {
    expect(
      found(FeedbackRequest, { ident: 'l-1', good: false, task: 'CHAT', feedback: 'too short', text_block_id: 'r/t/body/0-10' }),
    ).toEqual([]);
    expect(found(FeedbackRequest, { good: 'yes', task: 'CHIT', feedback: 'x'.repeat(10_001), extra: true })).toEqual([
      ['body.ident', 'missing'],
      ['body.good', 'bool_type'],
      ['body.task', 'enum'],
      ['body.feedback', 'string_too_long'],
      ['body.extra', 'extra_forbidden'],
    ]);
    expect(collectIssues(FeedbackEnvelope, { kbid: 'k', body: { ident: 'l', good: true } }).issues).toEqual([]);
  });
});
