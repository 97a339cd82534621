import { rrf, weightedFusion } from './fusion';

describe('rank fusion', () => {
  const kw = [
    { id: 'a', score: 9 },
    { id: 'b', score: 5 },
    { id: 'c', score: 1 },
  ];
  const sem = [
    { id: 'c', score: 0.9 },
    { id: 'd', score: 0.8 },
  ];

  it('RRF sums w / (k + rank) with 0-based ranks and marks hits found by both', () => {
    const out = rrf(kw, sem, { k: 60, window: 500, boosting: { keyword: 1, semantic: 1 } });
    const c = out.find((h) => h.id === 'c');
    expect(c?.score).toBeCloseTo(1 / 62 + 1 / 60, 12);
    expect(c?.scoreType).toBe('BOTH');
    expect(out[0]?.id).toBe('c');
    expect(out.find((h) => h.id === 'a')?.score).toBeCloseTo(1 / 60, 12);
    expect(out.find((h) => h.id === 'd')?.scoreType).toBe('VECTOR');
  });

  it('RRF honours boosting and the window', () => {
    const out = rrf(kw, sem, { k: 60, window: 1, boosting: { keyword: 2, semantic: 0.5 } });
    expect(out.map((h) => h.id)).toEqual(['a', 'c']);
    expect(out[0]?.score).toBeCloseTo(2 / 60, 12);
  });

  it('skips fusion when only one retriever returned hits', () => {
    expect(rrf(kw, [], { k: 60, window: 500, boosting: { keyword: 1, semantic: 1 } }).map((h) => [h.id, h.score, h.scoreType])).toEqual([
      ['a', 9, 'BM25'],
      ['b', 5, 'BM25'],
      ['c', 1, 'BM25'],
    ]);
    expect(weightedFusion([], sem, { weight: 0.2, window: 10, floor: 0 })[0]).toMatchObject({ id: 'c', score: 0.9, scoreType: 'VECTOR' });
  });

  it('weighted fusion lets a small semantic weight reorder close keyword hits but not bury a clear winner', () => {
    const close = weightedFusion(
      [
        { id: 'x', score: 10 },
        { id: 'y', score: 9.8 },
      ],
      [{ id: 'y', score: 0.9 }],
      { weight: 0.2, window: 10, floor: 0.3 },
    );
    expect(close.map((h) => h.id)).toEqual(['y', 'x']);
    const clear = weightedFusion(
      [
        { id: 'x', score: 10 },
        { id: 'y', score: 4 },
      ],
      [{ id: 'y', score: 0.9 }],
      { weight: 0.2, window: 10, floor: 0.3 },
    );
    expect(clear.map((h) => h.id)).toEqual(['x', 'y']);
  });
});
