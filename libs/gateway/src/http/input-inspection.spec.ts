import { MAX_JSON_DEPTH, inspectInput, inspectPath } from './input-inspection';

describe('inspectInput', () => {
  it('accepts ordinary bodies', () => {
    expect(inspectInput({ title: 'x', texts: { a: { body: 'b' } }, labels: ['l', 1, null, true] }, ['body'])).toEqual([]);
  });

  it('names every reserved member, wherever it is (own properties, as JSON.parse makes them)', () => {
    const body = JSON.parse('{"constructor":{"prototype":{}},"texts":{"__proto__":{"body":"x"}},"a":[{"prototype":1}]}') as unknown;
    expect(inspectInput(body, ['body']).map((i) => i.loc)).toEqual([
      ['body', 'constructor'],
      ['body', 'texts', '__proto__'],
      ['body', 'a', 0, 'prototype'],
    ]);
  });

  it('names NUL characters in values and member names', () => {
    expect(inspectInput({ filters: ['ok', 'a\0b'], ['k\0']: 1 }, ['body']).map((i) => [i.loc, i.type])).toEqual([
      [['body', 'k\0'], 'string_pattern_mismatch'],
      [['body', 'filters', 1], 'string_pattern_mismatch'],
    ]);
  });

  it('refuses nesting past the limit without recursing, and caps the number of issues', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const issues = inspectInput(deep, ['body']);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.type).toBe('too_deep');
    expect(issues[0]?.loc).toHaveLength(MAX_JSON_DEPTH + 1);
    expect(inspectInput(Array(1000).fill('\0'), ['body'])).toHaveLength(20);
  });
});

describe('inspectPath', () => {
  it('refuses a NUL or broken percent-encoding in the path', () => {
    expect(inspectPath('/api/v1/kb/x/resource/abc')).toEqual([]);
    expect(inspectPath('/api/v1/kb/x/resource/a%00b')[0]?.loc).toEqual(['path']);
    expect(inspectPath('/api/v1/kb/x/resource/%E0%A4%A')[0]?.loc).toEqual(['path']);
  });
});
