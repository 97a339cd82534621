import { LexicalReranker, NOOP_RERANKER, TokenCache, lexicalFeatures, type RerankCandidate } from './rerank';

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

  it('lifts a close candidate holding the whole query together, and keeps a clear winner', async () => {
    const q = { text: 'vitamin D deficiency' };
    const ranked = await new LexicalReranker().rerank(q, [
      c('a', 'Deficiency in iron; vitamin C and D are discussed separately.', 1.0),
      c('b', 'Vitamin D deficiency raises the risk of fractures.', 0.95),
      c('c', 'Unrelated text about cars.', 0.9),
    ]);
    expect(ranked.map((x) => x.id)).toEqual(['b', 'a', 'c']);
    const clear = new LexicalReranker().rank(q, [c('a', 'Vitamin D and its deficiency.', 1.0), c('b', 'Vitamin D deficiency.', 0.2)]);
    expect(clear.map((x) => x.id)).toEqual(['a', 'b']);
  });

  it('keeps the order for ties and for queries without terms; noop changes nothing', async () => {
    const list = [c('a', 'same words', 1), c('b', 'same words', 1)];
    expect((await new LexicalReranker().rerank({ text: 'same words' }, list)).map((x) => x.id)).toEqual(['a', 'b']);
    expect(await new LexicalReranker().rerank({ text: '' }, list)).toBe(list);
    expect(await NOOP_RERANKER.rerank({ text: 'x' }, list)).toBe(list);
  });
});

describe('TokenCache', () => {
  it('analyses a paragraph once, evicts the least recently used, and resets with its dictionary', () => {
    const cache = new TokenCache(2, 6);
    const first = cache.tokens('1', 'Tides follow the moon', 'en');
    expect(cache.tokens('1', 'ignored: cached by id', 'en')).toBe(first);
    cache.tokens('2', 'Spring tides', 'en');
    cache.tokens('1', '', 'en'); // 1 is now the most recent
    cache.tokens('3', 'Neap tides', 'en');
    expect(cache.tokens('1', 'x', 'en')).toBe(first);
    expect(cache.tokens('2', 'changed text', 'en')).not.toEqual(Int32Array.from([cache.termId('spring'), cache.termId('tide')]));
    const before = cache.generation;
    for (const w of ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta']) cache.termId(w);
    expect(cache.generation).toBeGreaterThan(before);
    expect(cache.tokens('1', 'Moon', 'en')).toEqual(Int32Array.from([cache.termId('moon')]));
  });

  it('gives the reranker the same order as analysing every time', () => {
    const c = (id: string, text: string, score: number): RerankCandidate => ({ id, text, language: 'en', score });
    const list = [
      c('a', 'Deficiency in iron; vitamin C and D are discussed separately.', 1.0),
      c('b', 'Vitamin D deficiency raises the risk of fractures.', 0.95),
    ];
    const reranker = new LexicalReranker();
    const once = reranker.rank({ text: 'vitamin D deficiency' }, list).map((x) => [x.id, x.score]);
    expect(reranker.rank({ text: 'vitamin D deficiency' }, list).map((x) => [x.id, x.score])).toEqual(once);
    expect(once.map(([id]) => id)).toEqual(['b', 'a']);
  });
});
