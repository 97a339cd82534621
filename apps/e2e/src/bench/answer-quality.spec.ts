import { citedGroundedness, normaliseAnswer, tokenF1 } from './answer-quality.bench';

describe('answer quality metrics', () => {
  it('normalises like SQuAD and scores token F1', () => {
    expect(normaliseAnswer('The  Eiffel Tower!')).toBe('eiffel tower');
    expect(tokenF1('the Eiffel Tower', 'Eiffel Tower')).toBe(1);
    expect(tokenF1('Eiffel', 'Eiffel Tower')).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('Paris', 'Eiffel Tower')).toBe(0);
  });

  it('counts answer sentences supported by a paragraph they cite', () => {
    const answer = 'Tides follow the moon. Cheese is made of milk.';
    const texts = new Map([
      ['p1', 'Tides follow the moon, mostly.'],
      ['p2', 'Volcanoes erupt.'],
    ]);
    expect(citedGroundedness(answer, { p1: [[0, 22]] }, texts)).toBe(0.5);
    expect(citedGroundedness(answer, { p2: [[0, 46]] }, texts)).toBe(0);
    expect(citedGroundedness('', {}, texts)).toBe(1);
  });
});
