import { collectIssues } from '../../common/validation';
import { AskRequest } from './ask.dto';

const found = (rag_strategies: unknown[]) =>
  collectIssues(AskRequest, { query: 'q', rag_strategies }, { loc: ['body'] }).issues.map((i) => [i.loc.join('.'), i.type]);

describe('rag_strategies: graph_beta', () => {
  it('accepts the reference members at their bounds', () => {
    expect(found([{ name: 'graph_beta' }])).toEqual([]);
    expect(
      found([
        {
          name: 'graph_beta',
          hops: 10,
          top_k: 300,
          exclude_processor_relations: false,
          relation_text_as_paragraphs: true,
          relation_ranking: 'generative',
          query_entity_detection: 'suggest',
          weight: 0,
        },
      ]),
    ).toEqual([]);
    expect(found([{ name: 'graph_beta', hops: 1, top_k: 1, agentic_graph_only: true, relation_ranking: 'reranker' }])).toEqual([]);
    // With the other strategies (the reference forbids no combination with it).
    expect(found([{ name: 'graph_beta' }, { name: 'full_resource' }, { name: 'prequeries', queries: [{ request: {}, id: 'p' }] }])).toEqual(
      [],
    );
  });

  it('refuses each bad member at its path', () => {
    expect(
      found([
        {
          name: 'graph_beta',
          hops: 11,
          top_k: 301,
          exclude_processor_relations: 'yes',
          relation_text_as_paragraphs: 1,
          relation_ranking: 'llm',
          query_entity_detection: 'fuzzy',
          weight: -1,
        },
      ]),
    ).toEqual([
      ['body.rag_strategies.0.hops', 'int_type'],
      ['body.rag_strategies.0.top_k', 'int_type'],
      ['body.rag_strategies.0.exclude_processor_relations', 'bool_type'],
      ['body.rag_strategies.0.relation_text_as_paragraphs', 'bool_type'],
      ['body.rag_strategies.0.relation_ranking', 'enum'],
      ['body.rag_strategies.0.query_entity_detection', 'enum'],
      ['body.rag_strategies.0.weight', 'float_type'],
    ]);
    expect(found([{ name: 'graph_beta', hops: 0, top_k: 0 }])).toEqual([
      ['body.rag_strategies.0.hops', 'int_type'],
      ['body.rag_strategies.0.top_k', 'int_type'],
    ]);
    expect(found([{ name: 'graph_beta', hops: 2.5 }])).toEqual([['body.rag_strategies.0.hops', 'int_type']]);
  });

  it('takes agentic_graph_only as the other name of exclude_processor_relations, not both disagreeing', () => {
    expect(found([{ name: 'graph_beta', agentic_graph_only: true, exclude_processor_relations: false }])).toEqual([
      ['body.rag_strategies.0.agentic_graph_only', 'value_error'],
    ]);
  });

  it("keeps the prequery id 'graph' for the graph's results", () => {
    expect(found([{ name: 'graph_beta' }, { name: 'prequeries', queries: [{ request: {}, id: 'graph' }] }])).toEqual([
      ['body.rag_strategies.1.queries.0.id', 'value_error'],
    ]);
    expect(found([{ name: 'prequeries', queries: [{ request: {}, id: 'graph' }] }])).toEqual([]);
  });

  it('allows it once', () => {
    expect(found([{ name: 'graph_beta' }, { name: 'graph_beta' }])).toEqual([['body.rag_strategies.1', 'value_error']]);
  });
});
