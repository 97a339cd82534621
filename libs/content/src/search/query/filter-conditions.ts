import { analyzeQuery } from '../analysis';
import { TYPE_LETTER } from '../search-ids';
import { canonicalUuid, MATCH_FALSE, MATCH_TRUE, type Match } from './filter-match';
import { likePrefix, type SqlParams } from './sql';

/** Where the columns a filter reads live: paragraphs (find/search/suggest) or resources (catalog). */
export interface FilterTarget {
  kind: 'paragraph' | 'resource';
  tags: string;
  rid: string;
  created: string;
  /** SQL for the KB id parameter. */
  kbid: string;
}

export const PARAGRAPH_TARGET = (kbid: string): FilterTarget => ({
  kind: 'paragraph',
  tags: 'p.tags',
  rid: 'p.rid',
  created: 'p.created_at',
  kbid,
});
export const RESOURCE_TARGET = (kbid: string): FilterTarget => ({
  kind: 'resource',
  tags: 'r.search_tags',
  rid: 'r.id',
  created: 'r.created_at',
  kbid,
});

/** Friendly names of the legacy filter syntax (API-MAP 2.7) → index tag prefixes. */
const ALIASES: [string, string][] = [
  ['/icon', '/n/i'],
  ['/metadata.status', '/n/s'],
  ['/metadata.languages', '/s/s'],
  ['/metadata.language', '/s/p'],
  ['/origin.tags', '/t'],
  ['/origin.metadata', '/m'],
  ['/origin.path', '/p'],
  ['/origin.source-id', '/u/s'],
  ['/origin.collaborators', '/u/o'],
  ['/classification.labels', '/l'],
  ['/entities', '/e'],
  ['/generated.data-augmentation', '/g/da'],
];

export function normaliseTag(tag: string): string {
  for (const [alias, real] of ALIASES) if (tag === alias || tag.startsWith(`${alias}/`)) return real + tag.slice(alias.length);
  return tag;
}

/** A condition as SQL and, when the memory index can decide it, as a Match (else null). */
export interface Cond {
  sql: string;
  match: Match | null;
}

export const TRUE: Cond = { sql: 'TRUE', match: MATCH_TRUE };
export const FALSE: Cond = { sql: 'FALSE', match: MATCH_FALSE };
export const sqlOnly = (sql: string): Cond => ({ sql, match: null });

export function combine(op: 'and' | 'or', parts: Cond[], wrap: boolean): Cond {
  const sql = parts.map((c) => c.sql).join(op === 'and' ? ' AND ' : ' OR ');
  const matches = parts.map((c) => c.match);
  const match = matches.every((m): m is Match => m !== null) ? (matches.length === 1 ? (matches[0] as Match) : { op, of: matches }) : null;
  return { sql: wrap ? `(${sql})` : sql, match };
}

export function negate(c: Cond): Cond {
  return { sql: `NOT (${c.sql})`, match: c.match ? { op: 'not', of: c.match } : null };
}
/**
 * The conditions a filter is made of (tags, fields, keywords, dates, resources), each as SQL and,
 * when the memory index can decide it, as a Match; FilterCompiler (filters.ts) combines them.
 */
export class FilterConditions {
  constructor(
    protected readonly params: SqlParams,
    protected readonly target: FilterTarget,
    protected readonly languages: readonly string[],
  ) {}

  /** A tag condition: the exact tag, or (hierarchical) any tag under it. */
  tag(tag: string): string {
    return this.tagCond(tag).sql;
  }

  protected tagCond(tag: string): Cond {
    const t = normaliseTag(tag).replace(/\/+$/, '');
    return {
      sql: `(${this.target.tags} @> ARRAY[${this.params.add(t)}]::text[] OR EXISTS (SELECT 1 FROM unnest(${this.target.tags}) AS tg WHERE tg LIKE ${this.params.add(likePrefix(`${t}/`))}))`,
      match: this.paragraphMatch({ op: 'tag', tag: t, under: true }),
    };
  }

  protected exactTag(tag: string): Cond {
    return {
      sql: `${this.target.tags} @> ARRAY[${this.params.add(tag)}]::text[]`,
      match: this.paragraphMatch({ op: 'tag', tag, under: false }),
    };
  }

  protected tagPrefix(prefix: string): Cond {
    return {
      sql: `EXISTS (SELECT 1 FROM unnest(${this.target.tags}) AS tg WHERE tg LIKE ${this.params.add(likePrefix(prefix))})`,
      match: this.paragraphMatch({ op: 'tagPrefix', prefix }),
    };
  }

  /** Matches describe paragraphs: a resource target (the catalog) gets none. */
  protected paragraphMatch(m: Match): Match | null {
    return this.target.kind === 'paragraph' ? m : null;
  }

  protected fieldCondition(type: string, name?: string): Cond {
    const letter = TYPE_LETTER[type] as string;
    if (this.target.kind === 'paragraph') {
      return name
        ? { sql: `p.field = ${this.params.add(`${letter}/${name}`)}`, match: { op: 'field', value: `${letter}/${name}`, prefix: false } }
        : { sql: `p.field LIKE ${this.params.add(likePrefix(`${letter}/`))}`, match: { op: 'field', value: `${letter}/`, prefix: true } };
    }
    const f = name ? `sp.field = ${this.params.add(`${letter}/${name}`)}` : `sp.field LIKE ${this.params.add(likePrefix(`${letter}/`))}`;
    return sqlOnly(`EXISTS (SELECT 1 FROM content.search_paragraphs sp WHERE sp.rid = r.id AND ${f})`);
  }

  protected keyword(word: string): Cond {
    const terms = analyzeQuery(word, this.languages);
    if (terms.length === 0) return TRUE;
    const owner =
      this.target.kind === 'paragraph'
        ? 'po.paragraph = p.id'
        : 'po.paragraph IN (SELECT sp.id FROM content.search_paragraphs sp WHERE sp.rid = r.id)';
    const sql = `EXISTS (SELECT 1 FROM content.search_postings po WHERE po.kbid = ${this.target.kbid} AND ${owner} AND po.term = ANY(${this.params.add(terms)}::text[]))`;
    return { sql, match: this.target.kind === 'paragraph' ? { op: 'terms', terms } : null };
  }

  protected modifiedRange(since?: Date, until?: Date): Cond {
    const conds: string[] = [];
    const col = this.target.kind === 'paragraph' ? 'mr.modified_at' : 'r.modified_at';
    if (since) conds.push(`${col} >= ${this.params.add(since)}`);
    if (until) conds.push(`${col} <= ${this.params.add(until)}`);
    if (!conds.length) return TRUE;
    if (this.target.kind === 'resource') return sqlOnly(conds.join(' AND '));
    return sqlOnly(`p.rid IN (SELECT mr.id FROM content.resources mr WHERE mr.kbid = ${this.target.kbid} AND ${conds.join(' AND ')})`);
  }

  protected createdRange(since?: Date, until?: Date): Cond {
    const conds: string[] = [];
    if (since) conds.push(`${this.target.created} >= ${this.params.add(since)}`);
    if (until) conds.push(`${this.target.created} <= ${this.params.add(until)}`);
    if (!conds.length) return TRUE;
    // (a Date holds milliseconds: as microseconds, exactly the value the statement compares)
    const match =
      this.target.kind === 'paragraph'
        ? ({
            op: 'created',
            ...(since ? { since: since.getTime() * 1000 } : {}),
            ...(until ? { until: until.getTime() * 1000 } : {}),
          } as const)
        : null;
    return { sql: conds.join(' AND '), match };
  }

  /** `rid = ANY(ids)`, or `rid = id` for one id that is not a `list` (ids already checked by the caller's pattern). */
  protected ridCondition(ids: string[], list: boolean): Cond {
    const canonical = ids.map(canonicalUuid);
    const match =
      this.target.kind === 'paragraph' && canonical.every((c) => c !== undefined)
        ? ({ op: 'rid', ids: canonical as string[] } as const)
        : null;
    if (!list) return { sql: `${this.target.rid} = ${this.params.add(ids[0])}::uuid`, match };
    return { sql: `${this.target.rid} = ANY(${this.params.add(ids)}::uuid[])`, match };
  }
}
