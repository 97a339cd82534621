import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { Check, checks, Closed, whenAbsent } from './member-checks';
import { collectIssues, nestedCheck } from './validation';

@Closed()
class Inner {
  @Check(checks.int(1, 10)) n?: number;
  @Check(
    whenAbsent((v, loc, issues, owner) => {
      if (v === undefined && owner['n'] === undefined) issues.push({ loc, msg: 'name or n', type: 'missing' });
    }),
  )
  name?: string;
}

@Closed()
class Narrower extends Inner {
  @Check(checks.int(1, 3)) override n?: number = undefined;
}

class Outer {
  @IsString() id!: string;
  @ValidateNested() @Type(() => Inner) inner!: Inner;
}

class CheckedOuter {
  @Check(checks.string({ required: true })) id!: string;
  @Check(nestedCheck(Inner)) inner!: Inner;
}

const locs = (cls: Parameters<typeof collectIssues>[0], v: unknown) =>
  collectIssues(cls, v, { loc: ['body'] }).issues.map((i) => `${i.loc.join('.')}:${i.type}`);

describe('member checks', () => {
  it('run without class-validator for a class of checks, keeping only declared members', () => {
    const { value, issues } = collectIssues(Inner, { n: 2, extra: 1 });
    expect(issues.map((i) => i.loc.join('.'))).toEqual(['extra']);
    expect(value).toBeInstanceOf(Inner);
    expect(value).not.toHaveProperty('extra');
  });

  it('run checks marked whenAbsent on absent members, the others only on present ones', () => {
    expect(locs(Inner, {})).toEqual(['body.name:missing']);
    expect(locs(Inner, { n: 1 })).toEqual([]);
  });

  it("let a subclass replace a member's check in place", () => {
    expect(locs(Narrower, { n: 5 })).toEqual(['body.n:less_than_equal']);
    expect(locs(Inner, { n: 5 })).toEqual([]);
  });

  it('run inside a class-validator class through @ValidateNested, and inside a checked class through nestedCheck', () => {
    expect(locs(Outer, { id: 1, inner: { n: 0, x: 1 } })).toEqual([
      'body.id:string_type',
      'body.inner.n:greater_than_equal',
      'body.inner.x:extra_forbidden',
    ]);
    expect(locs(CheckedOuter, { inner: { n: 0 } })).toEqual(['body.id:missing', 'body.inner.n:greater_than_equal']);
    expect(locs(CheckedOuter, { id: 'a', inner: [] })).toEqual(['body.inner:model_type']);
  });
});
