import { collectIssues } from '../../common/validation';
import { AskEnvelope, AskRequest } from './ask.dto';

const found = (body: unknown) => collectIssues(AskRequest, body, { loc: ['body'] }).issues.map((i) => [i.loc.join('.'), i.type]);

describe('AskRequest', () => {
  it('accepts a question with retrieval members, history, strategies and answer options', () => {
    expect(
      found({
        query: 'why tides?',
        features: ['keyword'],
        top_k: 5,
        filter_expression: { field: { prop: 'label', labelset: 'topic' } },
        chat_history: [{ author: 'USER', text: 'hi' }],
        extra_context: ['more'],
        citations: 'llm_footnotes',
        citation_threshold: 0.5,
        prompt: { system: 's', user: 'u' },
        max_tokens: { context: 1000, answer: 100 },
        generate_answer: false,
        generative_model: 'extractive',
        rag_strategies: [
          { name: 'neighbouring_paragraphs', before: 1, after: 0 },
          { name: 'prequeries', queries: [{ request: { query: 'moon', features: ['semantic'] }, weight: 2 }] },
        ],
        reasoning: false,
        extra_context_images: [],
      }),
    ).toEqual([]);
  });

  it('reports every mistake, including inside rag_strategies and their prequery requests, each at its location', () => {
    expect(
      found({
        query: '  ',
        answer_json_schema: { type: 'array' },
        reasoning: { effort: 'max', budget_tokens: 10, show: true },
        bogus: 1,
        citations: 'sometimes',
        chat_history: [{ author: 'BOT', text: 'x' }],
        context: [],
        prompt: { system: 1, other: 'x' },
        max_tokens: 0,
        generative_model_seed: 1.5,
        features: ['graph'],
        rag_strategies: [
          { name: 'full_resource' },
          { name: 'hierarchy', count: -1 },
          { name: 'graph_beta', hops: 11 },
          { name: 'prequeries', queries: [{ request: { top_k: 0, nope: 1 } }] },
          { name: 'hierarchy' },
        ],
      }),
    ).toEqual([
      ['body.query', 'string_too_short'],
      ['body.features.0', 'enum'],
      ['body.citations', 'enum'],
      ['body.context', 'value_error'],
      ['body.chat_history.0', 'model_type'],
      ['body.prompt.system', 'string_type'],
      ['body.prompt.other', 'extra_forbidden'],
      ['body.generative_model_seed', 'int_type'],
      ['body.max_tokens', 'int_type'],
      ['body.rag_strategies.1.count', 'int_type'],
      ['body.rag_strategies.2.hops', 'int_type'],
      ['body.rag_strategies.3.queries.0.request.top_k', 'greater_than_equal'],
      ['body.rag_strategies.3.queries.0.request.nope', 'extra_forbidden'],
      ['body.rag_strategies.4', 'value_error'],
      ['body.rag_strategies', 'value_error'],
      ['body.answer_json_schema', 'value_error'],
      ['body.reasoning.show', 'extra_forbidden'],
      ['body.reasoning.effort', 'enum'],
      ['body.reasoning.budget_tokens', 'int_type'],
      ['body.bogus', 'extra_forbidden'],
    ]);
    expect(found({})).toEqual([['body.query', 'missing']]);
  });

  it('accepts the answer options in both of their forms', () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, items: { type: 'array', items: { $ref: '#/$defs/item' } } },
      $defs: { item: { type: 'string' } },
    };
    expect(
      found({ query: 'q', rephrase: true, prompt: { rephrase: 'Standalone: {question}' }, answer_json_schema: schema, reasoning: true }),
    ).toEqual([]);
    expect(
      found({
        query: 'q',
        answer_json_schema: { name: 'verdict', description: 'd', parameters: schema },
        reasoning: { display: false, effort: 'low', budget_tokens: 2048 },
      }),
    ).toEqual([]);
  });

  it('bounds answer_json_schema (size, depth, remote references) and checks the rephrase prompt', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { x: deep } };
    expect(found({ query: 'q', answer_json_schema: deep })).toEqual([['body.answer_json_schema', 'too_long']]);
    expect(found({ query: 'q', answer_json_schema: { type: 'object', description: 'x'.repeat(20_000) } })).toEqual([
      ['body.answer_json_schema', 'too_long'],
    ]);
    expect(
      found({ query: 'q', answer_json_schema: { type: 'object', properties: { a: { $ref: 'https://evil.example/schema.json' } } } }),
    ).toEqual([['body.answer_json_schema', 'value_error']]);
    expect(found({ query: 'q', answer_json_schema: { name: 'bad name!', parameters: { type: 'object' } } })).toEqual([
      ['body.answer_json_schema.name', 'string_pattern_mismatch'],
    ]);
    expect(found({ query: 'q', answer_json_schema: [] })).toEqual([['body.answer_json_schema', 'model_type']]);
    expect(found({ query: 'q', prompt: { rephrase: 'no placeholder' }, reasoning: 'yes' })).toEqual([
      ['body.prompt.rephrase', 'value_error'],
      ['body.reasoning', 'model_type'],
    ]);
  });

  it("is the /ask bus payload with the credential's groups", () => {
    const { value, issues } = collectIssues(AskEnvelope, {
      kbid: 'k',
      body: { query: 'q' },
      forced_groups: ['g'],
      learning_id: 'l',
      show_consumption: true,
    });
    expect(issues).toEqual([]);
    expect(value).toMatchObject({ kbid: 'k', forced_groups: ['g'], learning_id: 'l', show_consumption: true });
  });
});
