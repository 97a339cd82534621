import { IsArray, IsDefined, IsInt, IsOptional, IsString, Matches, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { DomainError, ErrorCodes } from './errors';
import { collectIssues, validatePayload } from './validation';

class Inner {
  @IsDefined() @IsString() name!: string;
}

class Listing {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Inner) items?: Inner[];
  @IsOptional() @ValidateNested() @Type(() => Inner) one?: Inner;
}

class Sample {
  @IsDefined() @IsString() @Matches(/^[a-z]+$/) slug!: string;
  @IsOptional() @IsInt() @Min(0) size?: number;
  @IsOptional() @ValidateNested() @Type(() => Inner) inner?: Inner;
}

describe('validatePayload', () => {
  it('returns a class instance when valid and drops unknown members', () => {
    const value = validatePayload(Sample, { slug: 'abc', size: 3, extra: 1 });
    expect(value).toBeInstanceOf(Sample);
    expect(value).toEqual({ slug: 'abc', size: 3 });
  });

  it.each([
    [{ size: 3 }, [{ loc: ['body', 'slug'], type: 'missing' }]],
    [
      { slug: 'A1', size: -1 },
      [
        { loc: ['body', 'slug'], type: 'string_pattern_mismatch' },
        { loc: ['body', 'size'], type: 'greater_than_equal' },
      ],
    ],
    [{ slug: 'ok', inner: { name: 4 } }, [{ loc: ['body', 'inner', 'name'], type: 'string_type' }]],
  ])('lists every invalid member of %j', (input, expected) => {
    const { issues } = collectIssues(Sample, input, { loc: ['body'] });
    expect(issues).toEqual(expected.map((e) => expect.objectContaining(e)));
  });

  it('rejects a non-object body as a whole', () => {
    expect.assertions(3);
    expect(() => validatePayload(Sample, 'text', { loc: ['body'] })).toThrow(DomainError);
    try {
      validatePayload(Sample, [1], { loc: ['body'] });
    } catch (err) {
      expect((err as DomainError).code).toBe(ErrorCodes.VALIDATION_FAILED);
      expect((err as DomainError).details).toEqual({
        detail: [{ loc: ['body'], msg: 'Input should be a valid object', type: 'model_type' }],
      });
    }
  });

  it('applies rules registered after a class was first validated (cached metadata is dropped)', () => {
    class Late {
      @IsOptional() @IsString() name?: string;
      count?: unknown;
    }
    class LateChild extends Late {}
    expect(collectIssues(Late, { name: 'a', count: 'x' }).issues).toEqual([]);
    expect(collectIssues(LateChild, { name: 1 }).issues.map((i) => i.loc)).toEqual([['name']]);
    IsOptional()(Late.prototype, 'count');
    IsInt()(Late.prototype, 'count');
    expect(collectIssues(Late, { name: 'a', count: 'x' }).issues.map((i) => i.loc)).toEqual([['count']]);
    expect(collectIssues(LateChild, { count: 'x' }).issues.map((i) => i.loc)).toEqual([['count']]);
    // Repeated validations give the same answers from the cache.
    expect(collectIssues(Sample, { slug: 'ok', size: -1 }).issues.map((i) => i.loc)).toEqual([['size']]);
    expect(collectIssues(Sample, { slug: 'ok', size: -1 }).issues.map((i) => i.loc)).toEqual([['size']]);
  });

  it('refuses a list where one nested object is expected, and a list inside a list of objects (class-validator walks any iterable)', () => {
    expect(collectIssues(Listing, { items: [{ name: 'a' }], one: { name: 'b' } }).issues).toEqual([]);
    expect(collectIssues(Listing, { items: [[{ name: 'a' }]], one: [{ name: 'b' }] }, { loc: ['body'] }).issues).toEqual([
      { loc: ['body', 'items', 0], msg: 'Input should be a valid object', type: 'model_type' },
      { loc: ['body', 'one'], msg: 'Input should be a valid object', type: 'model_type' },
    ]);
  });
});
