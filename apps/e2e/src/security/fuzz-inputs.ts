import fc from 'fast-check';

/** A JSON value as the fuzz builds it (objects may carry own `__proto__`/`constructor` members). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** Sets an own, enumerable member even for `__proto__` (a plain assignment would set the prototype). */
function put(target: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const clone = (v: Json): Json => JSON.parse(JSON.stringify(v)) as Json;

function nest(depth: number): Json {
  let v: Json = 'x';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

export const DANGEROUS_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

/** Values that tend to break hand parsers: other JSON types, NUL bytes, huge and odd numbers, deep nesting, prototype keys. */
export const strangeValue: fc.Arbitrary<Json> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<Json>(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e308,
      -1e308,
      2 ** 53 + 1,
      1e21,
      -0.0000001,
      '',
      '\u0000',
      'a\u0000b',
      '../../etc/passwd',
      '\u202e\ud83d\ude00\u0301',
      'x'.repeat(20_000),
      [],
      {},
      [[[[[]]]]],
      ['\u0000'],
      [{}],
      [null],
      [1, 'a', {}],
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<Json>(nest(40), nest(3_000)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Json>(
      JSON.parse('{"__proto__":{"polluted":1}}') as Json,
      JSON.parse('{"constructor":{"prototype":{"polluted":1}}}') as Json,
      JSON.parse('{"prototype":{}}') as Json,
      { toString: 'x' },
      { hasOwnProperty: 1 },
    ),
  },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) },
);

type Mutation =
  | { kind: 'replace'; at: number; value: Json }
  | { kind: 'key'; at: number; key: string; value: Json }
  | { kind: 'nul'; at: number }
  | { kind: 'delete'; at: number }
  | { kind: 'wrap'; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: strangeValue }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('key' as const), at: fc.nat(), key: fc.constantFrom(...DANGEROUS_KEYS), value: strangeValue }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('nul' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wrap' as const), at: fc.nat() }) },
);

/** Every path into a body, iteratively and no deeper than 40 levels (a body may already hold 3000-deep nesting). */
function pathsOf(root: Json): Path[] {
  const out: Path[] = [];
  const stack: { v: Json; at: Path }[] = [{ v: root, at: [] }];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const { v, at } = top;
    out.push(at);
    if (at.length >= 40) continue;
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ v: item, at: [...at, i] }));
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) stack.push({ v: v[k] as Json, at: [...at, k] });
  }
  return out;
}

function get(v: Json, path: Path): Json {
  return path.reduce<Json>((node, k) => (node as Record<string, Json>)[k as string] as Json, v);
}

/** Replaces the value at `path` (the root when empty); returns the new root. */
function set(root: Json, path: Path, value: Json | undefined): Json {
  if (path.length === 0) return value === undefined ? null : value;
  const parent = get(root, path.slice(0, -1));
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) {
    if (value === undefined) parent.splice(key as number, 1);
    else parent[key as number] = value;
  } else if (parent && typeof parent === 'object') {
    if (value === undefined) delete parent[key as string];
    else put(parent, key as string, value);
  }
  return root;
}

export function applyMutation(body: Json, m: Mutation): Json {
  const paths = pathsOf(body);
  const path = paths[m.at % paths.length] as Path;
  const current = get(body, path);
  switch (m.kind) {
    case 'replace':
      return set(body, path, clone(m.value));
    case 'delete':
      return path.length === 0 ? {} : set(body, path, undefined);
    case 'wrap':
      return set(body, path, [current]);
    case 'nul': {
      if (typeof current === 'string') return set(body, path, `${current.slice(0, 1)}\u0000${current.slice(1)}`);
      const key = path[path.length - 1];
      if (typeof key === 'string') {
        const parent = get(body, path.slice(0, -1)) as Record<string, Json>;
        delete parent[key];
        put(parent, `${key}\u0000`, current);
        return body;
      }
      return set(body, path, '\u0000');
    }
    case 'key': {
      const target: Record<string, Json> = current && typeof current === 'object' && !Array.isArray(current) ? current : {};
      put(target, m.key, clone(m.value));
      return current === target ? body : set(body, path, target);
    }
  }
}

/** A valid body with one to three mutations, or (now and then) any JSON at all. */
export function mutatedBody(valid: Json): fc.Arbitrary<Json> {
  return fc.oneof(
    {
      weight: 9,
      arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => ms.reduce((b, m) => applyMutation(b, m), clone(valid))),
    },
    { weight: 1, arbitrary: strangeValue },
  );
}

/** Path segments: random and hostile ids (NUL, traversal, unicode, very long, broken escapes), sent as they are or percent-encoded. */
export const hostileId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '%00',
    'a%00b',
    '..',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '%',
    '%zz',
    '%E0%A4%A',
    '%C0%AF',
    '%u0000',
    '00000000-0000-0000-0000-000000000000',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    'toString',
    '-1',
    '1e309',
    ' ',
    '%20',
    "'; DROP TABLE x; --",
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom(2_000, 9_000, 20_000).map((n) => 'a'.repeat(n)),
);

/** Header values a client can put on the wire (printable and latin-1; no CR/LF/NUL/DEL, which the client refuses). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    'Bearer',
    'Bearer ',
    'Bearer x',
    'Basic YTpi',
    'Bearer kbk_00000000000000000000000000000000_' + 'A'.repeat(43),
    'true',
    'false',
    'yes',
    '1',
    '-1',
    'application/json',
    'application/json; charset=utf-16',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '127.0.0.1, 10.0.0.1',
    'x'.repeat(8_000),
  ),
  fc
    .string({
      unit: fc
        .integer({ min: 0x20, max: 0xfe })
        .filter((c) => c !== 0x7f)
        .map((c) => String.fromCharCode(c)),
      maxLength: 60,
    })
    .filter((s) => s.trim() === s),
);
