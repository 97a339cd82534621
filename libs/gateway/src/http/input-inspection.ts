import type { ValidationIssue } from '@kb/contracts';

type Loc = (string | number)[];

/**
 * Member names refused in every object of every request: in a free-form map they reach code that
 * treats keys as properties (object spreads, class-transformer, `target[key] = …`), where they
 * reach or replace an object's prototype instead of naming data.
 */
export const RESERVED_MEMBER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** Deeper JSON than this is refused: no request shape nests half as deep (filter expressions included). */
export const MAX_JSON_DEPTH = 32;
/** One answer lists at most this many problems (a body of a million NUL strings is one 422, not a huge one). */
const MAX_ISSUES = 20;

/**
 * Walks a parsed request part (JSON or form body, query) once, iteratively (no recursion to
 * overflow), and reports what no route accepts: reserved member names, NUL characters (PostgreSQL
 * refuses them in text and jsonb, so they would surface as a 500 far from their cause), and
 * nesting past MAX_JSON_DEPTH. Every route gets this at the edge, before its own validation.
 */
export function inspectInput(value: unknown, root: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  // A node knows its parent and its key; its path is built only for an issue (most bodies have none).
  const stack: Node[] = [{ value, parent: undefined, key: undefined, depth: 0 }];
  const locOf = (node: Node | undefined, last?: string): Loc => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let n = node; n && n.key !== undefined; n = n.parent) path.push(n.key);
    return [...root, ...path.reverse()];
  };
  for (let top = stack.pop(); top && issues.length < MAX_ISSUES; top = stack.pop()) {
    const v = top.value;
    if (typeof v === 'string') {
      if (v.includes('\0'))
        issues.push({ loc: locOf(top), msg: 'String should not contain NUL characters', type: 'string_pattern_mismatch' });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const depth = top.depth;
    if (depth >= MAX_JSON_DEPTH) {
      issues.push({ loc: locOf(top), msg: `Input should not nest deeper than ${MAX_JSON_DEPTH} levels`, type: 'too_deep' });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: top, key: i, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      if (RESERVED_MEMBER_NAMES.has(key))
        issues.push({ loc: locOf(top, key), msg: `Member name ${key} is reserved and not accepted`, type: 'value_error' });
      else if (key.includes('\0'))
        issues.push({ loc: locOf(top, key), msg: 'Member names should not contain NUL characters', type: 'string_pattern_mismatch' });
      else stack.push({ value: (v as Record<string, unknown>)[key], parent: top, key, depth: depth + 1 });
    }
  }
  return issues;
}

interface Node {
  value: unknown;
  parent: Node | undefined;
  key: string | number | undefined;
  depth: number;
}

/** NUL in the (decoded) path: a path id can never hold one, and it would reach SQL as a parameter. */
export function inspectPath(path: string): ValidationIssue[] {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return [{ loc: ['path'], msg: 'Path should be valid percent-encoded UTF-8', type: 'value_error' }];
  }
  return decoded.includes('\0') ? [{ loc: ['path'], msg: 'Path should not contain NUL characters', type: 'string_pattern_mismatch' }] : [];
}
