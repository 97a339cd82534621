import { TYPE_LETTER } from '../search-ids';
import type { CatalogFilterExpression, FilterExpression, FilterExpressionOf, KvCondition, LegacyFilters } from '@kb/contracts';
import { isObject, type IssueSink } from './issues';
import { FilterConditions, FALSE, TRUE, combine, negate, sqlOnly, type Cond, type FilterTarget } from './filter-conditions';
import { kvExpressionSql } from './kv-filter';
import type { SqlParams } from './sql';

export { PARAGRAPH_TARGET, RESOURCE_TARGET, normaliseTag, type FilterTarget } from './filter-conditions';

/**
 * Compiles every filter member of a search request into one SQL condition (and, for paragraphs,
 * the same condition as a Match for the memory index when it only reads tags, field, language and
 * resource). Members come typed from the request's DTO; what the compiler cannot read is reported to an IssueSink.
 */
export class FilterCompiler extends FilterConditions {
  /**
   * `kvRids`: the resources the request's `key_value` expression selects, when the caller looked
   * them up (FindPlanner, for the memory index): the expression is then a resource-id condition.
   */
  constructor(
    params: SqlParams,
    target: FilterTarget,
    languages: readonly string[],
    private readonly kvRids?: readonly string[],
  ) {
    super(params, target, languages);
  }

  /** The `key_value` expression: the looked-up resources, else its SQL (which the memory index cannot decide). */
  private keyValue(e: FilterExpressionOf<KvCondition>): Cond {
    if (this.kvRids) return this.kvRids.length ? this.ridCondition([...this.kvRids], true) : FALSE;
    return sqlOnly(kvExpressionSql(this.params, this.target.rid, e));
  }

  /** One expression of the filter_expression language (API-MAP 2.1); `allowed` limits the props by context. */
  expression(r: IssueSink, e: unknown, loc: (string | number)[], context: 'field' | 'paragraph' | 'resource'): Cond {
    if (!isObject(e)) {
      r.issue(loc, 'Input should be a valid object', 'model_type');
      return TRUE;
    }
    if ('and' in e || 'or' in e) {
      const op = 'and' in e ? 'and' : 'or';
      const list = e[op];
      if (!Array.isArray(list) || list.length === 0) {
        r.issue([...loc, op], 'Input should be a non-empty list', 'list_type');
        return TRUE;
      }
      return combine(
        op,
        list.map((x, i) => this.expression(r, x, [...loc, op, i], context)),
        true,
      );
    }
    if ('not' in e) return negate(this.expression(r, e['not'], [...loc, 'not'], context));
    const prop = e['prop'];
    const str = (name: string, required: boolean): string | undefined => {
      const v = e[name];
      if (v === undefined || v === null) {
        if (required) r.issue([...loc, name], 'Field required', 'missing');
        return undefined;
      }
      if (typeof v !== 'string' || v === '') {
        r.issue([...loc, name], 'Input should be a non-empty string', 'string_type');
        return undefined;
      }
      return v;
    };
    const date = (name: string): Date | undefined => {
      const v = e[name];
      if (v === undefined || v === null) return undefined;
      const d = typeof v === 'string' ? new Date(v) : undefined;
      if (!d || Number.isNaN(d.getTime())) {
        r.issue([...loc, name], 'Input should be a valid datetime', 'datetime_parsing');
        return undefined;
      }
      return d;
    };
    const paragraphOnly = ['kind'];
    const notForResource = ['field', 'keyword', 'field_mimetype', 'kind'];
    if (typeof prop === 'string' && context !== 'paragraph' && paragraphOnly.includes(prop)) {
      r.issue([...loc, 'prop'], `'${prop}' is a paragraph filter`, 'value_error');
      return TRUE;
    }
    if (typeof prop === 'string' && context === 'resource' && notForResource.includes(prop)) {
      r.issue([...loc, 'prop'], `'${prop}' cannot filter resources`, 'value_error');
      return TRUE;
    }
    switch (prop) {
      case 'resource': {
        const id = str('id', false);
        const slug = str('slug', false);
        if (!id === !slug) {
          r.issue(loc, 'Exactly one of id or slug is required', 'value_error');
          return TRUE;
        }
        if (id) return /^[0-9a-f-]{32,36}$/i.test(id) ? this.ridCondition([id], false) : FALSE;
        return sqlOnly(
          `${this.target.rid} IN (SELECT sr.id FROM content.resources sr WHERE sr.kbid = ${this.target.kbid} AND sr.slug = ${this.params.add(slug)})`,
        );
      }
      case 'field': {
        const type = str('type', true);
        if (type && !(type in TYPE_LETTER)) {
          r.issue(
            [...loc, 'type'],
            `Input should be ${Object.keys(TYPE_LETTER)
              .map((k) => `'${k}'`)
              .join(', ')}`,
            'enum',
          );
          return TRUE;
        }
        return type ? this.fieldCondition(type, str('name', false)) : TRUE;
      }
      case 'keyword': {
        const word = str('word', true);
        return word ? this.keyword(word) : TRUE;
      }
      case 'created':
        return this.createdRange(date('since'), date('until'));
      case 'modified':
        return this.modifiedRange(date('since'), date('until'));
      case 'label': {
        const set = str('labelset', true);
        const label = str('label', false);
        return set ? this.tagCond(label ? `/l/${set}/${label}` : `/l/${set}`) : TRUE;
      }
      case 'resource_mimetype':
      case 'field_mimetype': {
        const type = str('type', true);
        const sub = str('subtype', false);
        const prefix = prop === 'resource_mimetype' ? '/n/i' : '/mt';
        return type ? this.tagCond(sub ? `${prefix}/${type}/${sub}` : `${prefix}/${type}`) : TRUE;
      }
      case 'entity': {
        const sub = str('subtype', true);
        const value = str('value', false);
        return sub ? this.tagCond(value ? `/e/${sub}/${value}` : `/e/${sub}`) : TRUE;
      }
      case 'language': {
        const lang = str('language', true);
        if (!lang) return TRUE;
        const primary = this.exactTag(`/s/p/${lang}`);
        if (e['only_primary'] === true) return primary;
        const alternatives = [primary, this.exactTag(`/s/s/${lang}`)];
        if (this.target.kind === 'paragraph')
          alternatives.push({ sql: `p.language = ${this.params.add(lang)}`, match: { op: 'language', value: lang } });
        return combine('or', alternatives, true);
      }
      case 'origin_tag': {
        const tag = str('tag', true);
        return tag ? this.exactTag(`/t/${tag}`) : TRUE;
      }
      case 'origin_metadata': {
        const field = str('field', true);
        const value = str('value', false);
        return field ? this.tagCond(value !== undefined ? `/m/${field}/${value}` : `/m/${field}`) : TRUE;
      }
      case 'origin_path': {
        const prefix = str('prefix', false);
        if (!prefix) return this.tagCond('/p');
        return this.tagPrefix(`/p/${prefix.replace(/^\/+/, '')}`);
      }
      case 'origin_source': {
        const id = str('id', false);
        return this.tagCond(id ? `/u/s/${id}` : '/u/s');
      }
      case 'origin_collaborator': {
        const c = str('collaborator', true);
        return c ? this.exactTag(`/u/o/${c}`) : TRUE;
      }
      case 'generated': {
        if (e['by'] !== 'data-augmentation') r.issue([...loc, 'by'], "Input should be 'data-augmentation'", 'enum');
        const task = str('da_task', false);
        return this.tagCond(task ? `/g/da/${task}` : '/g/da');
      }
      case 'kind': {
        const kind = str('kind', true);
        return kind ? this.exactTag(`/k/${kind.toUpperCase()}`) : TRUE;
      }
      case 'status': {
        const status = str('status', true);
        return status ? this.exactTag(`/n/s/${status.toUpperCase()}`) : TRUE;
      }
      default:
        r.issue([...loc, 'prop'], `Unknown filter prop ${JSON.stringify(prop)}`, 'union_tag_invalid');
        return TRUE;
    }
  }

  /** Legacy `filters`: a list of tags (all must match) or `[{all|any|none|not_all: [...]}]`. */
  legacy(r: IssueSink, filters: LegacyFilters, loc: (string | number)[]): Cond {
    if (!Array.isArray(filters)) {
      r.issue(loc, 'Input should be a valid list', 'list_type');
      return TRUE;
    }
    const conds: Cond[] = [];
    filters.forEach((f, i) => {
      if (typeof f === 'string') {
        conds.push(this.tagCond(f));
        return;
      }
      if (!isObject(f)) {
        r.issue([...loc, i], 'Input should be a tag or an {all|any|none|not_all} object', 'value_error');
        return;
      }
      for (const [op, tags] of Object.entries(f)) {
        if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) {
          r.issue([...loc, i, op], 'Input should be a list of tags', 'list_type');
          continue;
        }
        const c = (tags as string[]).map((t) => this.tagCond(t));
        if (c.length === 0) continue;
        if (op === 'all') conds.push(combine('and', c, true));
        else if (op === 'any') conds.push(combine('or', c, true));
        else if (op === 'none') conds.push(negate(combine('or', c, false)));
        else if (op === 'not_all') conds.push(negate(combine('and', c, false)));
        else r.issue([...loc, i, op], "Input should be 'all', 'any', 'none' or 'not_all'", 'enum');
      }
    });
    return conds.length ? combine('and', conds, false) : TRUE;
  }

  /** `fields`: `a/title`, `t/body`, or a bare type letter / field type. */
  fields(r: IssueSink, fields: string[]): Cond {
    const conds: Cond[] = [];
    fields.forEach((f, i) => {
      const m = /^([a-z_]+)(?:\/(.+))?$/.exec(f);
      const letters = Object.values(TYPE_LETTER);
      const letter = m ? (letters.includes(m[1] as string) ? m[1] : TYPE_LETTER[m[1] as string]) : undefined;
      if (!m || !letter) {
        r.issue(['fields', i], 'A field is <type letter>/<field id>, e.g. t/body or a/title', 'value_error');
        return;
      }
      const type = Object.keys(TYPE_LETTER).find((k) => TYPE_LETTER[k] === letter) as string;
      conds.push(this.fieldCondition(type, m[2]));
    });
    return conds.length ? combine('or', conds, true) : TRUE;
  }

  /** Every filter member of a search request, combined with AND. */
  compile(m: FilterMembers, r: IssueSink, o: { allowFieldFilters: boolean }): string {
    return this.compileMatch(m, r, o).sql;
  }

  /**
   * compile, with the same condition as a Match when the memory index can decide it (null when
   * a member needs SQL); `'TRUE'` with a constant Match when the request has no filter. The members
   * were checked by their DTO (filterExpressionCheck, legacyFiltersCheck, fieldsCheck): what only
   * the compiler knows (a field type without a letter) is reported to `r`.
   */
  compileMatch(m: FilterMembers, r: IssueSink, o: { allowFieldFilters: boolean }): Cond {
    const conds: Cond[] = [];
    const fe = m.filter_expression;
    if (fe) {
      const parts: Cond[] = [];
      const operator = 'operator' in fe && fe.operator === 'or' ? 'or' : 'and';
      for (const [key, e] of Object.entries(fe)) {
        if (key === 'field' || key === 'paragraph' || key === 'resource')
          parts.push(this.expression(r, e, ['filter_expression', key], key));
        else if (key === 'key_value' && isObject(e)) parts.push(this.keyValue(e as FilterExpressionOf<KvCondition>));
      }
      if (parts.length) conds.push(combine(operator, parts, true));
    }
    if (m.filters) conds.push(this.legacy(r, m.filters, ['filters']));
    if (o.allowFieldFilters) {
      if (m.fields?.length) conds.push(this.fields(r, m.fields));
      for (const k of m.keyword_filters ?? []) conds.push(this.keyword(k));
    }
    const rids = m.resource_filters;
    if (rids?.length) {
      const valid = rids.filter((id) =>
        /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(id.split('/')[0] as string),
      );
      conds.push(
        valid.length
          ? this.ridCondition(
              valid.map((id) => id.split('/')[0] as string),
              true,
            )
          : FALSE,
      );
    }
    const cs = dateOf(m.range_creation_start);
    const ce = dateOf(m.range_creation_end);
    if (cs || ce) conds.push(this.createdRange(cs, ce));
    const ms = dateOf(m.range_modification_start);
    const me = dateOf(m.range_modification_end);
    if (ms || me) conds.push(this.modifiedRange(ms, me));
    return conds.length ? combine('and', conds, false) : TRUE;
  }
}

/** The filter members of a search request (/find, /search, /suggest, /ask, /catalog, /graph), as their DTOs declare them. */
export interface FilterMembers {
  filter_expression?: FilterExpression | CatalogFilterExpression;
  filters?: LegacyFilters;
  fields?: string[];
  keyword_filters?: string[];
  resource_filters?: string[];
  range_creation_start?: string;
  range_creation_end?: string;
  range_modification_start?: string;
  range_modification_end?: string;
}

const dateOf = (v: string | undefined | null): Date | undefined => (v === undefined || v === null ? undefined : new Date(v));

/**
 * The groups a search runs with: the credential's (temporal keys with groups replace the body's),
 * else the body's `security.groups` (`access_groups` accepted; `[]` when `security` has neither),
 * else none.
 */
export function securityGroupsOf(security: SecurityMembers | undefined | null, forced: string[] | undefined): string[] | undefined {
  if (forced) return forced;
  if (!security) return undefined;
  return security.groups ?? security.access_groups ?? [];
}

/** The `security` member of a search request. */
export interface SecurityMembers {
  groups?: string[];
  access_groups?: string[];
}

/**
 * Security groups (API-MAP 4.6): with groups, a row matches when public or sharing any group;
 * without, everything matches unless the KB enforces security (then public only).
 */
export function securityCondition(params: SqlParams, groupsColumn: string, groups: string[] | undefined, enforce: boolean): string {
  if (groups && groups.length) return `(${groupsColumn} = '{}' OR ${groupsColumn} && ${params.add(groups)}::text[])`;
  return enforce ? `${groupsColumn} = '{}'` : 'TRUE';
}
