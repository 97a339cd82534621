import type { ValidationIssue } from '@kb/contracts';
import { checkEntityMap } from './entity-map';

const check = (input: unknown) => {
  const issues: ValidationIssue[] = [];
  const entities = checkEntityMap(input, ['body', 'add'], issues);
  return { entities, locs: issues.map((i) => i.loc.join('.')) };
};

describe('checkEntityMap', () => {
  it('keeps valid entities with their defaults', () => {
    expect(check({ cat: { value: 'cat' }, dog: { value: 'Dog', merged: true, represents: ['puppy'] } })).toEqual({
      entities: { cat: { value: 'cat', merged: false, represents: [] }, dog: { value: 'Dog', merged: true, represents: ['puppy'] } },
      locs: [],
    });
    expect(check(undefined)).toEqual({ entities: {}, locs: [] });
  });

  it('names every bad member and keeps the good ones', () => {
    const { entities, locs } = check({
      ok: { value: 'ok' },
      a: { value: '' },
      b: 'text',
      c: { value: 'c', represents: Array(51).fill('x') },
      d: { value: 'd', merged: 'yes' },
      e: { value: 'e', extra: 1 },
      f: { value: 'v'.repeat(251) },
      g: { value: 'nul\0' },
      ['k'.repeat(251)]: { value: 'k' },
    });
    expect(Object.keys(entities)).toEqual(['ok']);
    expect(locs).toEqual([
      'body.add.a.value',
      'body.add.b',
      'body.add.c.represents',
      'body.add.d.merged',
      'body.add.e.extra',
      'body.add.f.value',
      'body.add.g.value',
      `body.add.${'k'.repeat(251)}`,
    ]);
  });

  it('refuses what is not a map, and more entities than a group holds', () => {
    expect(check([]).locs).toEqual(['body.add']);
    expect(check('x').locs).toEqual(['body.add']);
    expect(check(Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`e${i}`, { value: 'v' }]))).locs).toEqual(['body.add']);
  });
});
