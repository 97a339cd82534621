import { LexicalReranker, NOOP_RERANKER, lexicalFeatures, type RerankCandidate } from './rerank';

describe('lexicalFeatures', () => {
  it('measures coverage, proximity and order of the query terms in a paragraph', () => {
    const q = 'vitamin D deficiency';
    expect(lexicalFeatures(q, 'Vitamin D deficiency is common in winter.', 'en')).toEqual({ coverage: 1, proximity: 1, order: 1 });
    const apart = lexicalFeatures(q, 'Deficiency of iron, unlike vitamin levels or D-dimer, was studied.', 'en');
    expect(apart.coverage).toBe(1);
    expect(apart.proximity).toBeLessThan(1);
    expect(apart.order).toBe(0);
    expect(lexicalFeatures(q, 'Nothing relevant here.', 'en')).toEqual({ coverage: 0, proximity: 0, order: 0 });
    expect(lexicalFeatures(q, 'Vitamins matter.', 'en')).toMatchObject({ coverage: 1 / 3, proximity: 0 });
  });

  it('matches stems as the keyword index does', () => {
    expect(lexicalFeatures('running shoes', 'He runs in his new shoe.', 'en').coverage).toBe(1);
  });
});

describe('LexicalReranker (predict)', () => {
  const c = (id: string, text: string, score: number): RerankCandidate => ({ id, text, language: 'en', score });

  it('lifts a close candidate holding the whole query together, and keeps a clear winner', () => {
    const q = { text: 'vitamin D deficiency' };
    const ranked = new LexicalReranker().rerank(q, [
      c('a', 'Deficiency in iron; vitamin C and D are discussed separately.', 1.0),
      c('b', 'Vitamin D deficiency raises the risk of fractures.', 0.95),
      c('c', 'Unrelated text about cars.', 0.9),
    ]);
    expect(ranked.map((x) => x.id)).toEqual(['b', 'a', 'c']);
    const clear = new LexicalReranker().rerank(q, [c('a', 'Vitamin D and its deficiency.', 1.0), c('b', 'Vitamin D deficiency.', 0.2)]);
    expect(clear.map((x) => x.id)).toEqual(['a', 'b']);
  });

  it('keeps the order for ties and for queries without terms; noop changes nothing', () => {
    const list = [c('a', 'same words', 1), c('b', 'same words', 1)];
    expect(new LexicalReranker().rerank({ text: 'same words' }, list).map((x) => x.id)).toEqual(['a', 'b']);
    expect(new LexicalReranker().rerank({ text: '' }, list)).toBe(list);
    expect(NOOP_RERANKER.rerank({ text: 'x' }, list)).toBe(list);
  });
});
