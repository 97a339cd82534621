/**
 * A filter condition in a form the in-memory search index can decide (docs/decisions/0014): the
 * same condition FilterCompiler writes as SQL over `content.search_paragraphs`, for the members
 * that only read a paragraph's tags, field, language, resource, creation date and terms (keyword
 * filters, from the postings). Members that need another table (modification dates, slugs) have
 * no Match: such a request checks its candidates in SQL.
 */
export type Match =
  | { op: 'and' | 'or'; of: Match[] }
  | { op: 'not'; of: Match }
  | { op: 'const'; value: boolean }
  /** `tags @> [tag]`, and with `under` also any tag below it (`tag/...`). */
  | { op: 'tag'; tag: string; under: boolean }
  /** Any tag starting with `prefix` (LIKE 'prefix%'). */
  | { op: 'tagPrefix'; prefix: string }
  /** `field = value`, or with `prefix` `field LIKE 'value%'`. */
  | { op: 'field'; value: string; prefix: boolean }
  | { op: 'language'; value: string }
  /** `rid = ANY(ids)`, ids in PostgreSQL's canonical uuid text (lowercase, hyphenated). */
  | { op: 'rid'; ids: string[] }
  /** `created_at >= since AND created_at <= until` (either may be absent), in microseconds since the epoch. */
  | { op: 'created'; since?: number; until?: number }
  /** The paragraph holds one of these analysed terms (a keyword filter: `EXISTS` a posting). */
  | { op: 'terms'; terms: string[] };

export const MATCH_TRUE: Match = { op: 'const', value: true };
export const MATCH_FALSE: Match = { op: 'const', value: false };

/** The attributes of one paragraph a Match reads (interned: see KbMemoryIndex). */
export interface MatchAttributes {
  tagSets: readonly (readonly string[])[];
  fields: readonly string[];
  languages: readonly string[];
  rids: readonly string[];
}

/** Which attribute values each paragraph has, by ordinal, as indexes into MatchAttributes. */
export interface MatchColumns {
  tagSet: Int32Array;
  field: Int32Array;
  language: Int32Array;
  rid: Int32Array;
  /** The resource's creation time (`created_at`), microseconds since the epoch. */
  created: Float64Array;
}

/** What a Match reads beyond the columns: which paragraphs hold any of some terms (1 per ordinal). */
export interface MatchPostings {
  holding(terms: string[]): Uint8Array;
}

/** Whether `m` reads something that can differ between paragraphs with the same attributes (their terms). */
export function perParagraph(m: Match): boolean {
  if (m.op === 'terms') return true;
  if (m.op === 'and' || m.op === 'or') return m.of.some(perParagraph);
  if (m.op === 'not') return perParagraph(m.of);
  return false;
}

/**
 * `m` as a predicate over paragraph ordinals. Each leaf is decided once per distinct value it
 * reads (a tag set, a field name…) and remembered for the predicate's lifetime.
 */
export function compileMatch(m: Match, a: MatchAttributes, c: MatchColumns, postings?: MatchPostings): (ord: number) => boolean {
  switch (m.op) {
    case 'const':
      return m.value ? () => true : () => false;
    case 'and': {
      const parts = m.of.map((x) => compileMatch(x, a, c, postings));
      return (o) => parts.every((p) => p(o));
    }
    case 'or': {
      const parts = m.of.map((x) => compileMatch(x, a, c, postings));
      return (o) => parts.some((p) => p(o));
    }
    case 'not': {
      const inner = compileMatch(m.of, a, c, postings);
      return (o) => !inner(o);
    }
    case 'tag': {
      const below = `${m.tag}/`;
      return memoised(a.tagSets, c.tagSet, (set) => set.some((t) => t === m.tag || (m.under && t.startsWith(below))));
    }
    case 'tagPrefix':
      return memoised(a.tagSets, c.tagSet, (set) => set.some((t) => t.startsWith(m.prefix)));
    case 'field':
      return memoised(a.fields, c.field, (f) => (m.prefix ? f.startsWith(m.value) : f === m.value));
    case 'language':
      return memoised(a.languages, c.language, (l) => l === m.value);
    case 'rid': {
      const ids = new Set(m.ids);
      return memoised(a.rids, c.rid, (r) => ids.has(r));
    }
    case 'created': {
      const since = m.since ?? -Infinity;
      const until = m.until ?? Infinity;
      return (o) => {
        const t = c.created[o] as number;
        return t >= since && t <= until;
      };
    }
    case 'terms': {
      if (!postings) throw new Error('A keyword filter needs the postings');
      const has = postings.holding(m.terms);
      return (o) => has[o] === 1;
    }
  }
}

function memoised<T>(values: readonly T[], column: Int32Array, test: (v: T) => boolean): (ord: number) => boolean {
  // 0 = not decided yet, 1 = false, 2 = true
  const memo = new Uint8Array(values.length);
  return (o) => {
    const i = column[o] as number;
    let d = memo[i] as number;
    if (d === 0) memo[i] = d = test(values[i] as T) ? 2 : 1;
    return d === 2;
  };
}

/** PostgreSQL's text form of a uuid literal it would accept in the forms clients send, else undefined. */
export function canonicalUuid(s: string): string | undefined {
  const hex = s.toLowerCase();
  if (/^[0-9a-f]{32}$/.test(hex))
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(hex)) return hex;
  return undefined;
}
