import type { AskItem } from '@kb/contracts';
import { syncAskResponse } from './ask.controller';

describe('syncAskResponse (x-synchronous /ask)', () => {
  const results = {
    resources: {},
    relations: { entities: {} },
    query: 'q',
    rephrased_query: 'q2',
    total: 0,
    page_number: 0,
    page_size: 20,
    next_page: false,
    nodes: null,
    shards: null,
    autofilters: [],
    min_score: { semantic: 0, bm25: 0 },
    best_matches: [],
    metrics: null,
    search_after: null,
  };

  it('folds reasoning, answer_json and relations items into their members', () => {
    const relations = { entities: { Paris: { related_to: [] } } };
    const items: AskItem[] = [
      { type: 'reasoning', text: 'Think ' },
      { type: 'reasoning', text: 'twice.' },
      { type: 'answer_json', object: { city: 'Paris' } },
      { type: 'retrieval', results, best_matches: [] },
      { type: 'status', code: '0', status: 'success' },
      { type: 'relations', relations },
    ];
    expect(syncAskResponse(items, 'l-1')).toMatchObject({
      answer: '',
      reasoning: 'Think twice.',
      answer_json: { city: 'Paris' },
      relations,
      status: 'success',
      learning_id: 'l-1',
      retrieval_results: { rephrased_query: 'q2' },
    });
  });

  it('leaves them out when the stream had none', () => {
    const out = syncAskResponse(
      [
        { type: 'answer', text: 'Hi' },
        { type: 'status', code: '0', status: 'success' },
      ],
      'l-2',
    );
    expect(out.answer).toBe('Hi');
    expect(out).not.toHaveProperty('reasoning');
    expect(out).not.toHaveProperty('answer_json');
    expect(out).not.toHaveProperty('relations');
  });
});
