import { collectIssues } from '../common/validation';
import type { KvSchemaDto } from './kb-config.dto';
import { checkKvExpression, KeyValueFieldInputDto, KV_LIMITS, kvSchemaIssues, kvText, normaliseKvValues } from './key-value';
import type { ValidationIssue } from '../common/errors';

const at = (issues: ValidationIssue[]) => issues.map((i) => [i.loc.join('.'), i.type]);
const inputIssues = (v: unknown) => at(collectIssues(KeyValueFieldInputDto, v, { loc: ['body'] }).issues);

describe('key_value field input', () => {
  it('accepts text, numbers, booleans, dates and ranges', () => {
    expect(
      inputIssues({
        values: { name: 'Sprocket', price: 12.5, active: true, released: '2024-05-01', window: { from: 1, to: 3 } },
      }),
    ).toEqual([]);
  });

  it('requires values, and bounds keys, key names, text lengths and value types, each at its location', () => {
    expect(inputIssues({})).toEqual([['body.values', 'missing']]);
    expect(inputIssues({ values: [] })).toEqual([['body.values', 'model_type']]);
    expect(inputIssues({ values: {}, extra: 1 })).toEqual([['body.extra', 'extra_forbidden']]);
    const many = Object.fromEntries(Array.from({ length: KV_LIMITS.keys + 1 }, (_, i) => [`k${i}`, i]));
    expect(inputIssues({ values: many })).toEqual([['body.values', 'too_long']]);
    expect(
      inputIssues({
        values: {
          'a/b': 1,
          'a.b': 1,
          long: 'x'.repeat(KV_LIMITS.textChars + 1),
          nested: { a: 1 },
          list: [1],
          nothing: null,
          inf: Number.POSITIVE_INFINITY,
          mixed: { from: 1, to: '2024-01-01' },
          backwards: { from: 5, to: 1 },
          more: { from: 1, to: 2, step: 1 },
        },
      }),
    ).toEqual([
      ['body.values.a/b', 'string_pattern_mismatch'],
      ['body.values.a.b', 'string_pattern_mismatch'],
      ['body.values.long', 'string_too_long'],
      ['body.values.nested', 'value_error'],
      ['body.values.list', 'value_error'],
      ['body.values.nothing', 'value_error'],
      ['body.values.inf', 'finite_number'],
      ['body.values.mixed', 'value_error'],
      ['body.values.backwards.to', 'value_error'],
      ['body.values.more.step', 'extra_forbidden'],
    ]);
    const big = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'y'.repeat(KV_LIMITS.textChars)]));
    expect(inputIssues({ values: big })).toEqual([['body.values', 'too_long']]);
  });
});

describe('key_value values against a schema', () => {
  const schema: KvSchemaDto = {
    name: 'product',
    description: '',
    fields: [
      { key: 'name', type: 'text', required: true },
      { key: 'price', type: 'float', required: true },
      { key: 'stock', type: 'integer', required: false },
      { key: 'active', type: 'boolean', required: false },
      { key: 'released', type: 'date', required: false },
      { key: 'window', type: 'date', required: false, range: true },
    ],
  };
  const loc = ['body', 'values'];

  it('accepts values that follow the schema', () => {
    expect(
      kvSchemaIssues(
        schema,
        { name: 'x', price: 1, stock: 3, active: false, released: '2024-01-01', window: { from: '2024-01-01', to: '2024-02-01' } },
        loc,
      ),
    ).toEqual([]);
  });

  it('reports unknown keys, missing required keys and values of the wrong type', () => {
    expect(
      at(kvSchemaIssues(schema, { other: 1, price: 'cheap', stock: 1.5, active: 'yes', released: 'soon', window: '2024-01-01' }, loc)),
    ).toEqual([
      ['body.values.other', 'extra_forbidden'],
      ['body.values.name', 'missing'],
      ['body.values.price', 'float_type'],
      ['body.values.stock', 'int_type'],
      ['body.values.active', 'bool_type'],
      ['body.values.released', 'datetime_parsing'],
      ['body.values.window', 'value_error'],
    ]);
    expect(at(kvSchemaIssues(schema, { name: 'x', price: 1, window: { from: 1, to: 2 } }, loc))).toEqual([
      ['body.values.window.from', 'datetime_parsing'],
      ['body.values.window.to', 'datetime_parsing'],
    ]);
  });

  it('stores the dates of date keys and date ranges in one ISO form, and is searched as key: value paragraphs', () => {
    const stored = normaliseKvValues(
      { name: 'x', released: '2024-01-01', window: { from: '2024-01-01', to: '2024-02-01T10:00:00+02:00' } },
      schema,
    );
    expect(stored).toEqual({
      name: 'x',
      released: '2024-01-01T00:00:00.000Z',
      window: { from: '2024-01-01T00:00:00.000Z', to: '2024-02-01T08:00:00.000Z' },
    });
    expect(normaliseKvValues({ released: '2024-01-01' })).toEqual({ released: '2024-01-01' });
    expect(kvText({ name: 'Sprocket', price: 2, window: { from: 1, to: 3 } })).toBe('name: Sprocket\n\nprice: 2\n\nwindow: 1 – 3');
  });
});

describe('key_value filter expressions', () => {
  const check = (e: unknown) => {
    const issues: ValidationIssue[] = [];
    checkKvExpression(e, ['kv'], issues);
    return at(issues);
  };

  it('accepts eq, gte/lte and contains conditions in and/or/not', () => {
    expect(
      check({
        and: [
          { schema_id: 'product', key: 'name', eq: 'x' },
          { not: { schema_id: 'product', key: 'price', gte: 1, lte: 5 } },
          {
            or: [
              { schema_id: 'product', key: 'released', gte: '2024-01-01' },
              { schema_id: 'p', key: 'n', contains: 'sp' },
            ],
          },
        ],
      }),
    ).toEqual([]);
  });

  it('reports bad conditions at their location', () => {
    expect(check({ and: [] })).toEqual([['kv.and', 'list_type']]);
    expect(check({ schema_id: 'a/b', key: 'k', eq: 1 })).toEqual([['kv.schema_id', 'string_pattern_mismatch']]);
    expect(check({ schema_id: 's', key: 'k' })).toEqual([['kv', 'value_error']]);
    expect(check({ schema_id: 's', key: 'k', eq: 1, contains: 'x' })).toEqual([['kv', 'value_error']]);
    expect(check({ schema_id: 's', key: 'k', eq: { a: 1 } })).toEqual([['kv.eq', 'value_error']]);
    expect(check({ schema_id: 's', key: 'k', contains: '' })).toEqual([['kv.contains', 'string_type']]);
    expect(check({ schema_id: 's', key: 'k', gte: 'soon' })).toEqual([['kv.gte', 'value_error']]);
    expect(check({ schema_id: 's', key: 'k', gte: 1, lte: '2024-01-01' })).toEqual([['kv', 'value_error']]);
    expect(check({ schema_id: 's', key: 'k', eq: 1, op: 'x' })).toEqual([['kv.op', 'extra_forbidden']]);
  });
});
