import 'reflect-metadata';
import { Allow } from 'class-validator';
import type { ValidationIssue } from './errors';

export type Loc = (string | number)[];

/**
 * Checks one member of a request: `value` is the member as sent (undefined when absent), `loc`
 * its location, `owner` the whole object (for rules that relate members, e.g. a reranker window
 * at least `top_k`). Problems are pushed onto `issues`.
 */
export type MemberCheck = (value: unknown, loc: Loc, issues: ValidationIssue[], owner: Record<string, unknown>) => void;

const CHECKS = Symbol('kb:member-checks');
const CLOSED = Symbol('kb:closed');

/**
 * Declares a member checked by `check` (unions, recursive expressions, lists reported item by
 * item, rules across members: what class-validator's decorators cannot say). `collectIssues` runs
 * the checks of a class and of its nested classes after class-validator, in declaration order,
 * every issue with its full location. The member is kept by the whitelist. A subclass may redeclare
 * a member: its check replaces the parent's.
 */
export function Check(check: MemberCheck, o: { whenAbsent?: boolean } = {}): PropertyDecorator {
  return (target, property) => {
    Allow()(target, property);
    const own: DeclaredCheck[] = Reflect.getOwnMetadata(CHECKS, target) ?? [
      ...((Reflect.getMetadata(CHECKS, target) as DeclaredCheck[] | undefined) ?? []),
    ];
    const declared: DeclaredCheck = [
      String(property),
      check,
      o.whenAbsent === true || (check as { whenAbsent?: boolean }).whenAbsent === true,
    ];
    // A subclass redeclaring a member replaces its check in place.
    const at = own.findIndex(([p]) => p === declared[0]);
    if (at >= 0) own[at] = declared;
    else own.push(declared);
    Reflect.defineMetadata(CHECKS, own, target);
  };
}

/** A declared check: the member, its check, and whether it runs when the member is absent. */
export type DeclaredCheck = [property: string, check: MemberCheck, whenAbsent: boolean];

/** Marks a check that must run when its member is absent (required members, rules across members). */
export function whenAbsent(check: MemberCheck): MemberCheck {
  return Object.assign(check, { whenAbsent: true });
}

/** Several checks on one member, run in order. */
export function Checks(...checks: MemberCheck[]): PropertyDecorator {
  const all: MemberCheck = (value, loc, issues, owner) => {
    for (const c of checks) c(value, loc, issues, owner);
  };
  return Check(checks.some((c) => (c as { whenAbsent?: boolean }).whenAbsent) ? whenAbsent(all) : all);
}

/** Members of a class with checks, in declaration order. */
export function memberChecks(target: object): readonly DeclaredCheck[] {
  return (Reflect.getMetadata(CHECKS, target) as DeclaredCheck[] | undefined) ?? [];
}

/**
 * A closed class: a member it does not declare is reported as `extra_forbidden` wherever the
 * class is validated (a route's pipe or a bus subject's payload), not only where the caller asked.
 */
export function Closed(): ClassDecorator {
  return (target) => Reflect.defineMetadata(CLOSED, true, target);
}

export function isClosed(cls: Function): boolean {
  return Reflect.getMetadata(CLOSED, cls) === true;
}

// ---- Reusable checks, each with the message and type clients already know ----------------------

const absent = (v: unknown): boolean => v === undefined || v === null;
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const quoted = (allowed: readonly string[]): string => allowed.map((a) => `'${a}'`).join(', ');

export const checks = {
  string: (o: { max?: number; required?: boolean } = {}): MemberCheck => {
    const check: MemberCheck = (v, loc, issues) => {
      if (absent(v)) {
        if (o.required) issues.push({ loc, msg: 'Field required', type: 'missing' });
      } else if (typeof v !== 'string') issues.push({ loc, msg: 'Input should be a valid string', type: 'string_type' });
      else if (o.max !== undefined && v.length > o.max)
        issues.push({ loc, msg: `String should have at most ${o.max} characters`, type: 'string_too_long' });
    };
    return o.required ? whenAbsent(check) : check;
  },

  bool: (): MemberCheck => (v, loc, issues) => {
    if (!absent(v) && typeof v !== 'boolean') issues.push({ loc, msg: 'Input should be a valid boolean', type: 'bool_type' });
  },

  int:
    (min: number, max: number): MemberCheck =>
    (v, loc, issues) => {
      if (absent(v)) return;
      if (typeof v !== 'number' || !Number.isInteger(v)) issues.push({ loc, msg: 'Input should be a valid integer', type: 'int_type' });
      else if (v < min) issues.push({ loc, msg: `Input should be greater than or equal to ${min}`, type: 'greater_than_equal' });
      else if (v > max) issues.push({ loc, msg: `Input should be less than or equal to ${max}`, type: 'less_than_equal' });
    },

  number:
    (o: { min?: number; max?: number } = {}): MemberCheck =>
    (v, loc, issues) => {
      if (absent(v)) return;
      if (typeof v !== 'number' || !Number.isFinite(v)) issues.push({ loc, msg: 'Input should be a valid number', type: 'float_type' });
      else if (o.min !== undefined && v < o.min)
        issues.push({ loc, msg: `Input should be greater than or equal to ${o.min}`, type: 'greater_than_equal' });
      else if (o.max !== undefined && v > o.max)
        issues.push({ loc, msg: `Input should be less than or equal to ${o.max}`, type: 'less_than_equal' });
    },

  object: (): MemberCheck => (v, loc, issues) => {
    if (!absent(v) && !isPlainObject(v)) issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  },

  /** An ISO date or date-time string. */
  date: (): MemberCheck => (v, loc, issues) => {
    if (absent(v)) return;
    if (typeof v !== 'string' || Number.isNaN(new Date(v).getTime()))
      issues.push({ loc, msg: 'Input should be a valid datetime', type: 'datetime_parsing' });
  },

  oneOf:
    (allowed: readonly string[]): MemberCheck =>
    (v, loc, issues) => {
      if (!absent(v) && (typeof v !== 'string' || !allowed.includes(v)))
        issues.push({ loc, msg: `Input should be ${quoted(allowed)}`, type: 'enum' });
    },

  /** A list of strings, each item reported at its index. `allowed`: an enumeration. */
  stringList:
    (o: { maxItems: number; max: number; allowed?: readonly string[] }): MemberCheck =>
    (v, loc, issues) => {
      if (absent(v)) return;
      if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
      if (v.length > o.maxItems) return void issues.push({ loc, msg: `List should have at most ${o.maxItems} items`, type: 'too_long' });
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item !== 'string') issues.push({ loc: [...loc, i], msg: 'Input should be a valid string', type: 'string_type' });
        else if (item.length > o.max)
          issues.push({ loc: [...loc, i], msg: `String should have at most ${o.max} characters`, type: 'string_too_long' });
        else if (o.allowed && !o.allowed.includes(item))
          issues.push({ loc: [...loc, i], msg: `Input should be ${quoted(o.allowed)}`, type: 'enum' });
      }
    },

  /** A member kept for compatibility but refused unless unset (or `allowed`): `not_supported`, saying why. */
  unsupported:
    (why: string, allowed: (v: unknown) => boolean = absent): MemberCheck =>
    (v, loc, issues) => {
      if (!allowed(v)) issues.push({ loc, msg: `Not supported: ${why}`, type: 'not_supported' });
    },

  /** Accepted as anything and without effect (documented as such). */
  any: (): MemberCheck => () => undefined,
};
