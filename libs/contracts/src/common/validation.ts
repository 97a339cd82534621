import 'reflect-metadata';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, validateSync, type MetadataStorage, type ValidationError } from 'class-validator';
import { DomainError, type ValidationIssue } from './errors';
import { mapOfSpecs } from './map-of';
import { isClosed, memberChecks, whenAbsent, type MemberCheck } from './member-checks';

/** What class-validator registers per decorated member (its ValidationMetadata, not exported by its index). */
type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/**
 * class-validator 0.14 recomputes a class's validation metadata on every validate call, scanning
 * every registered class for inheritance: with this service's few hundred DTO classes that was the
 * largest single cost of a write request (about 9 % of the request thread in the create-resource
 * benchmark). The result depends only on the arguments and on the metadata registered so far, so
 * it is cached per class and arguments, and the cache is dropped whenever a decorator registers
 * more metadata. Callers only read the returned arrays.
 */
function memoizeValidationMetadata(): void {
  const storage = getMetadataStorage() as MetadataStorage & { __kbMemoized?: boolean };
  if (storage.__kbMemoized) return;
  storage.__kbMemoized = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let cache = new WeakMap<Function, Map<string, ValidationMetadata[]>>();
  storage.addValidationMetadata = (metadata) => {
    cache = new WeakMap();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (typeof target !== 'function') return lookup(target, schema, always, strictGroups, groups);
    const key = `${schema}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0001') ?? ''}`;
    let byKey = cache.get(target);
    if (!byKey) cache.set(target, (byKey = new Map()));
    let found = byKey.get(key);
    if (!found) byKey.set(key, (found = lookup(target, schema, always, strictGroups, groups)));
    return found;
  };
}
memoizeValidationMetadata();

/** Maps class-validator constraint names to short, stable `type` strings. */
function issueType(constraint: string): string {
  const known: Record<string, string> = {
    isString: 'string_type',
    isInt: 'int_type',
    isNumber: 'float_type',
    isBoolean: 'bool_type',
    isArray: 'list_type',
    isObject: 'dict_type',
    isDateString: 'datetime_type',
    isISO8601: 'datetime_type',
    isEnum: 'enum',
    isIn: 'enum',
    matches: 'string_pattern_mismatch',
    maxLength: 'string_too_long',
    minLength: 'string_too_short',
    arrayMaxSize: 'too_long',
    arrayMinSize: 'too_short',
    max: 'less_than_equal',
    min: 'greater_than_equal',
    isDefined: 'missing',
    isNotEmpty: 'missing',
    whitelistValidation: 'extra_forbidden',
    nestedValidation: 'model_type',
    isEmail: 'value_error',
    isUUID: 'uuid_parsing',
  };
  return known[constraint] ?? constraint;
}

const TYPE_CHECKS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isDateString', 'isISO8601']);

function flatten(errors: ValidationError[], loc: (string | number)[], out: ValidationIssue[]): void {
  for (const error of errors) {
    const here = [...loc, /^\d+$/.test(error.property) ? Number(error.property) : error.property];
    if (error.constraints) {
      const missing = (error.value === undefined || error.value === null) && 'isDefined' in error.constraints;
      if (missing) {
        out.push({ loc: here, msg: 'Field required', type: 'missing' });
      } else {
        // A value of the wrong type fails every other check too: report the type alone.
        const entries = Object.entries(error.constraints);
        const typeChecks = entries.filter(([k]) => TYPE_CHECKS.has(k));
        for (const [constraint, msg] of typeChecks.length > 0 ? typeChecks : entries) {
          out.push({ loc: here, msg, type: issueType(constraint) });
        }
      }
    }
    if (error.children && error.children.length > 0) flatten(error.children, here, out);
  }
}

export interface ValidateOptions {
  /** Prefix for every `loc`, e.g. `['body']` or `['query']`. */
  loc?: (string | number)[];
  /** Reject unknown members instead of dropping them. */
  forbidUnknown?: boolean;
}

/** Lists every invalid member of `plain` against `cls`; empty when valid. */
export function collectIssues<T extends object>(
  cls: ClassConstructor<T>,
  plain: unknown,
  options: ValidateOptions = {},
): { value: T | undefined; issues: ValidationIssue[] } {
  const loc = options.loc ?? [];
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) {
    return { value: undefined, issues: [{ loc, msg: 'Input should be a valid object', type: 'model_type' }] };
  }
  if (isCheckedClass(cls)) return collectChecked(cls, plain as Record<string, unknown>, loc, options);
  const value = plainToInstance(cls, plain, { enableImplicitConversion: false, exposeDefaultValues: true });
  const errors = validateSync(value as object, {
    whitelist: true,
    forbidNonWhitelisted: options.forbidUnknown ?? false,
    forbidUnknownValues: false,
    validationError: { target: false, value: true },
  });
  const issues: ValidationIssue[] = [];
  flatten(errors, loc, issues);
  if (issues.length === 0) checkNestedShapes(value as object, loc, issues, 0);
  runMemberChecks(value as object, plain as Record<string, unknown>, loc, issues, 0);
  validateMaps(value as object, plain as Record<string, unknown>, loc, issues, options);
  return { value, issues };
}

const isPlainObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `@ValidateNested` accepts a list where one object is expected, and a list inside a list of
 * objects (class-validator walks any iterable): `labels: [[{title}]]` passed validation and failed
 * later as a 500. Every nested member must be an object, and every item of an `each` list one.
 */
function checkNestedShapes(value: object, loc: (string | number)[], issues: ValidationIssue[], depth: number): void {
  if (depth > 32) return;
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(value.constructor, '', true, false) as {
    type: string;
    propertyName: string;
    each?: boolean;
  }[];
  for (const m of metadatas) {
    if (m.type !== 'nestedValidation') continue;
    const member = (value as Record<string, unknown>)[m.propertyName];
    if (member === undefined || member === null) continue;
    const here = [...loc, m.propertyName];
    const items: [unknown, (string | number)[]][] =
      m.each && Array.isArray(member) ? member.map((item, i) => [item, [...here, i]]) : [[member, here]];
    for (const [item, at] of items) {
      if (!isPlainObject(item)) issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
      else checkNestedShapes(item, at, issues, depth + 1);
    }
  }
}

const knownMembers = new WeakMap<Function, Set<string>>();

/** The members a class declares (any validation decorator), for closed classes. */
function membersOf(cls: Function): Set<string> {
  let known = knownMembers.get(cls);
  if (!known) {
    const metadatas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false) as { propertyName: string }[];
    knownMembers.set(cls, (known = new Set(metadatas.map((m) => m.propertyName))));
  }
  return known;
}

/**
 * Runs the `@Check` declarations of `value`'s class and reports the members a `@Closed` class does
 * not declare; then the same for every nested member declared with `@ValidateNested`.
 */
function runMemberChecks(
  value: object,
  plain: Record<string, unknown>,
  loc: (string | number)[],
  issues: ValidationIssue[],
  depth: number,
): void {
  if (depth > 32) return;
  const cls = value.constructor;
  const declared = memberChecks(cls.prototype as object);
  for (const [property, check, always] of declared) {
    const member = plain[property];
    if (member !== undefined || always) check(member, [...loc, property], issues, plain);
  }
  if (isClosed(cls)) {
    const known = membersOf(cls);
    for (const key of Object.keys(plain))
      if (!known.has(key)) issues.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false) as {
    type: string;
    propertyName: string;
    each?: boolean;
  }[];
  for (const m of metadatas) {
    if (m.type !== 'nestedValidation') continue;
    const member = (value as Record<string, unknown>)[m.propertyName];
    const raw = plain[m.propertyName];
    if (!isPlainObject(member) || !isPlainObject(raw) || m.each) continue;
    runMemberChecks(member, raw as Record<string, unknown>, [...loc, m.propertyName], issues, depth + 1);
  }
}

const checkedClasses = new WeakMap<Function, boolean>();

/**
 * A class whose every member is declared with `@Check` (the search requests: large, nested, on the
 * hot path). Such a class is validated by its checks alone, without class-transformer's deep copy
 * and class-validator's walk (about 150 µs for a typical /find body, against a few µs).
 */
function isCheckedClass(cls: Function): boolean {
  let checked = checkedClasses.get(cls);
  if (checked === undefined) {
    const metadatas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false) as { type: string; propertyName: string }[];
    const declared = new Set(memberChecks(cls.prototype as object).map(([p]) => p));
    checked =
      metadatas.length > 0 &&
      metadatas.every((m) => m.type === 'whitelistValidation' && declared.has(m.propertyName)) &&
      Object.keys(mapOfSpecs(cls.prototype as object)).length === 0;
    checkedClasses.set(cls, checked);
  }
  return checked;
}

function collectChecked<T extends object>(
  cls: ClassConstructor<T>,
  plain: Record<string, unknown>,
  loc: (string | number)[],
  options: ValidateOptions,
): { value: T; issues: ValidationIssue[] } {
  const value = new cls() as Record<string, unknown>;
  for (const [property] of memberChecks(cls.prototype as object)) {
    if (Object.prototype.hasOwnProperty.call(plain, property) && plain[property] !== undefined) value[property] = plain[property];
  }
  const issues: ValidationIssue[] = [];
  runMemberChecks(value, plain, loc, issues, 0);
  if (options.forbidUnknown && !isClosed(cls)) {
    const known = membersOf(cls);
    for (const key of Object.keys(plain))
      if (!known.has(key)) issues.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  return { value: value as T, issues };
}

/**
 * A member holding an object of `cls`, validated as `cls` at the member's location (for checked
 * classes, whose members class-validator does not walk). Required unless `optional`.
 */
export function nestedCheck(cls: ClassConstructor<object>, o: { optional?: boolean } = {}): MemberCheck {
  const check: MemberCheck = (v, loc, issues) => {
    if (v === undefined || v === null) {
      if (!o.optional) issues.push({ loc, msg: 'Field required', type: 'missing' });
      return;
    }
    issues.push(...collectIssues(cls, v, { loc }).issues);
  };
  return o.optional ? check : whenAbsent(check);
}

/** Validates `@MapOf` members: an object whose keys match the pattern and whose values are valid. */
function validateMaps(
  value: object,
  plain: Record<string, unknown>,
  loc: (string | number)[],
  issues: ValidationIssue[],
  options: ValidateOptions,
): void {
  for (const [property, spec] of Object.entries(mapOfSpecs(value))) {
    const raw = plain[property];
    if (raw === undefined || raw === null) continue;
    const here = [...loc, property];
    if (typeof raw !== 'object' || Array.isArray(raw)) {
      issues.push({ loc: here, msg: 'Input should be a valid dictionary', type: 'dict_type' });
      continue;
    }
    const entries = Object.entries(raw as Record<string, unknown>);
    if (spec.maxEntries !== undefined && entries.length > spec.maxEntries) {
      issues.push({ loc: here, msg: `At most ${spec.maxEntries} entries are allowed`, type: 'too_long' });
    }
    const out: Record<string, object> = {};
    for (const [key, entry] of entries) {
      if (spec.keyPattern && !spec.keyPattern.test(key)) {
        issues.push({ loc: [...here, key], msg: `Key must match ${spec.keyPattern.source}`, type: 'string_pattern_mismatch' });
        continue;
      }
      const nested = collectIssues(spec.cls, entry, { ...options, loc: [...here, key] });
      issues.push(...nested.issues);
      if (nested.value) out[key] = nested.value;
    }
    (value as Record<string, unknown>)[property] = out;
  }
}

/** Transforms and validates `plain`, throwing one DomainError that lists every invalid member. */
export function validatePayload<T extends object>(cls: ClassConstructor<T>, plain: unknown, options: ValidateOptions = {}): T {
  const { value, issues } = collectIssues(cls, plain, options);
  // (no value comes only with an issue: the input was not an object)
  if (issues.length > 0 || value === undefined) throw DomainError.validation(issues);
  return value;
}
