import type { ValidationIssue } from '../../common/errors';
import { isPlainObject, type Loc, type MemberCheck } from '../../common/member-checks';
import { checkKvExpression, type KvCondition } from '../key-value';
import { FIELD_TYPE_LETTER } from '../resource.dto';
import { expressionSize, REQUEST_LIMITS } from './request-limits';

/**
 * The `filter_expression` language (API-MAP 2.1): boolean combinations of conditions on a
 * resource, a field or a paragraph. `field` expressions select the fields (and their paragraphs)
 * of matching resources; `paragraph` ones single paragraphs; `resource` ones (the catalog) resources.
 */
export type FilterExpressionOf<Leaf> =
  { and: FilterExpressionOf<Leaf>[] } | { or: FilterExpressionOf<Leaf>[] } | { not: FilterExpressionOf<Leaf> } | Leaf;

/** Field types a filter can name (`generic` is the title and summary). */
export const FilterFieldTypes = Object.keys(FIELD_TYPE_LETTER) as readonly string[];

export type ResourceCondition =
  | { prop: 'resource'; id: string; slug?: never }
  | { prop: 'resource'; slug: string; id?: never }
  | { prop: 'created' | 'modified'; since?: string; until?: string }
  | { prop: 'label'; labelset: string; label?: string }
  | { prop: 'resource_mimetype'; type: string; subtype?: string }
  | { prop: 'entity'; subtype: string; value?: string }
  | { prop: 'language'; language: string; only_primary?: boolean }
  | { prop: 'origin_tag'; tag: string }
  | { prop: 'origin_metadata'; field: string; value?: string }
  | { prop: 'origin_path'; prefix?: string }
  | { prop: 'origin_source'; id?: string }
  | { prop: 'origin_collaborator'; collaborator: string }
  | { prop: 'generated'; by: 'data-augmentation'; da_task?: string }
  | { prop: 'status'; status: string };

export type FieldCondition =
  | ResourceCondition
  | { prop: 'field'; type: string; name?: string }
  | { prop: 'keyword'; word: string }
  | { prop: 'field_mimetype'; type: string; subtype?: string };

export type ParagraphCondition = FieldCondition | { prop: 'kind'; kind: string };

export type ResourceFilterExpression = FilterExpressionOf<ResourceCondition>;
export type FieldFilterExpression = FilterExpressionOf<FieldCondition>;
export type ParagraphFilterExpression = FilterExpressionOf<ParagraphCondition>;

/** The `filter_expression` member of /find, /search, /suggest and /ask. */
export interface FilterExpression {
  field?: FieldFilterExpression;
  paragraph?: ParagraphFilterExpression;
  /** Conditions on the values of key_value fields (a resource matches through its field `schema_id`). */
  key_value?: FilterExpressionOf<KvCondition>;
  /** How `field`, `paragraph` and `key_value` combine (default `and`). */
  operator?: 'and' | 'or';
}

/** The `filter_expression` member of /catalog. */
export interface CatalogFilterExpression {
  resource?: ResourceFilterExpression;
}

/** Legacy `filters`: tags that must all match, or `{all|any|none|not_all: [tags]}` objects. */
export type LegacyFilters = (string | { all?: string[]; any?: string[]; none?: string[]; not_all?: string[] })[];

type Context = 'field' | 'paragraph' | 'resource';

/** Members of each condition: required (true) or optional (false), all non-empty strings. */
const CONDITION_MEMBERS: Record<string, Record<string, boolean>> = {
  field: { type: true },
  keyword: { word: true },
  label: { labelset: true, label: false },
  resource_mimetype: { type: true, subtype: false },
  field_mimetype: { type: true, subtype: false },
  entity: { subtype: true, value: false },
  language: { language: true },
  origin_tag: { tag: true },
  origin_metadata: { field: true, value: false },
  origin_path: { prefix: false },
  origin_source: { id: false },
  origin_collaborator: { collaborator: true },
  generated: { da_task: false },
  kind: { kind: true },
  status: { status: true },
};

/** Checks one expression of the language, every problem at its location. */
function checkExpression(e: unknown, loc: Loc, context: Context, issues: ValidationIssue[]): void {
  if (!isPlainObject(e)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if ('and' in e || 'or' in e) {
    const op = 'and' in e ? 'and' : 'or';
    const list = e[op];
    if (!Array.isArray(list) || list.length === 0)
      return void issues.push({ loc: [...loc, op], msg: 'Input should be a non-empty list', type: 'list_type' });
    list.forEach((x, i) => checkExpression(x, [...loc, op, i], context, issues));
    return;
  }
  if ('not' in e) return checkExpression(e['not'], [...loc, 'not'], context, issues);
  const prop = e['prop'];
  const str = (name: string, required: boolean): string | undefined => {
    const v = e[name];
    if (v === undefined || v === null) {
      if (required) issues.push({ loc: [...loc, name], msg: 'Field required', type: 'missing' });
      return undefined;
    }
    if (typeof v !== 'string' || v === '')
      return void issues.push({ loc: [...loc, name], msg: 'Input should be a non-empty string', type: 'string_type' });
    return v;
  };
  const date = (name: string): void => {
    const v = e[name];
    if (v !== undefined && v !== null && (typeof v !== 'string' || Number.isNaN(new Date(v).getTime())))
      issues.push({ loc: [...loc, name], msg: 'Input should be a valid datetime', type: 'datetime_parsing' });
  };
  if (typeof prop === 'string' && context !== 'paragraph' && prop === 'kind')
    return void issues.push({ loc: [...loc, 'prop'], msg: `'${prop}' is a paragraph filter`, type: 'value_error' });
  if (typeof prop === 'string' && context === 'resource' && ['field', 'keyword', 'field_mimetype'].includes(prop)) {
    return void issues.push({ loc: [...loc, 'prop'], msg: `'${prop}' cannot filter resources`, type: 'value_error' });
  }
  switch (prop) {
    case 'resource': {
      const id = str('id', false);
      const slug = str('slug', false);
      if (!id === !slug) issues.push({ loc, msg: 'Exactly one of id or slug is required', type: 'value_error' });
      return;
    }
    case 'field': {
      const type = str('type', true);
      if (type && !(FilterFieldTypes as readonly string[]).includes(type)) {
        return void issues.push({
          loc: [...loc, 'type'],
          msg: `Input should be ${FilterFieldTypes.map((k) => `'${k}'`).join(', ')}`,
          type: 'enum',
        });
      }
      if (type) str('name', false);
      return;
    }
    case 'created':
    case 'modified':
      date('since');
      date('until');
      return;
    case 'generated':
      if (e['by'] !== 'data-augmentation') issues.push({ loc: [...loc, 'by'], msg: "Input should be 'data-augmentation'", type: 'enum' });
      str('da_task', false);
      return;
    default: {
      const members =
        typeof prop === 'string' && Object.prototype.hasOwnProperty.call(CONDITION_MEMBERS, prop) ? CONDITION_MEMBERS[prop] : undefined;
      if (!members)
        return void issues.push({ loc: [...loc, 'prop'], msg: `Unknown filter prop ${JSON.stringify(prop)}`, type: 'union_tag_invalid' });
      for (const [name, required] of Object.entries(members)) str(name, required);
    }
  }
}

/** False (with the issue reported) when a nested expression is deeper or larger than REQUEST_LIMITS allow. */
export function withinExpressionLimits(value: unknown, loc: Loc, issues: ValidationIssue[]): boolean {
  const { depth, nodes } = expressionSize(value);
  if (depth > REQUEST_LIMITS.expressionDepth) {
    issues.push({ loc, msg: `Expression should nest at most ${REQUEST_LIMITS.expressionDepth} levels`, type: 'too_deep' });
    return false;
  }
  if (nodes > REQUEST_LIMITS.expressionNodes) {
    issues.push({ loc, msg: `Expression should have at most ${REQUEST_LIMITS.expressionNodes} values`, type: 'too_long' });
    return false;
  }
  return true;
}

/**
 * The `filter_expression` member: `field`/`paragraph` expressions and `operator` on paragraph
 * searches, `resource` on the catalog; bounded in depth and size before it is walked.
 */
export function filterExpressionCheck(target: 'paragraph' | 'resource'): MemberCheck {
  return (fe, loc, issues) => {
    if (fe === undefined || fe === null) return;
    if (!isPlainObject(fe)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
    if (!withinExpressionLimits(fe, loc, issues)) return;
    const operator = fe['operator'] ?? 'and';
    if (operator !== 'and' && operator !== 'or')
      issues.push({ loc: [...loc, 'operator'], msg: "Input should be 'and' or 'or'", type: 'enum' });
    for (const key of Object.keys(fe)) {
      if (key === 'operator') continue;
      if (key === 'field' || key === 'paragraph' || key === 'resource') {
        if (key === 'paragraph' && target !== 'paragraph')
          issues.push({ loc: [...loc, key], msg: 'Paragraph filters do not apply here', type: 'value_error' });
        else if (key === 'resource' && target !== 'resource')
          issues.push({ loc: [...loc, key], msg: 'Use field or paragraph filters here', type: 'extra_forbidden' });
        else if (key !== 'resource' && target === 'resource')
          issues.push({ loc: [...loc, key], msg: 'Catalog filters are {"resource": <expression>}', type: 'extra_forbidden' });
        else checkExpression(fe[key], [...loc, key], key, issues);
      } else if (key === 'key_value') {
        if (target === 'resource')
          issues.push({ loc: [...loc, key], msg: 'Catalog filters are {"resource": <expression>}', type: 'extra_forbidden' });
        else checkKvExpression(fe[key], [...loc, key], issues);
      } else issues.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    }
  };
}

/** Legacy `filters` (at most REQUEST_LIMITS.listItems); not together with a `filter_expression`. */
export const legacyFiltersCheck: MemberCheck = (filters, loc, issues, owner) => {
  if (filters === undefined || filters === null) return;
  if (Array.isArray(filters) && filters.length > REQUEST_LIMITS.listItems)
    return void issues.push({ loc, msg: `List should have at most ${REQUEST_LIMITS.listItems} items`, type: 'too_long' });
  if (!withinExpressionLimits(filters, loc, issues)) return;
  if (isPlainObject(owner['filter_expression']))
    issues.push({ loc, msg: 'Use filter_expression or filters, not both', type: 'value_error' });
  if (!Array.isArray(filters)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  filters.forEach((f, i) => {
    if (typeof f === 'string') return;
    if (!isPlainObject(f))
      return void issues.push({ loc: [...loc, i], msg: 'Input should be a tag or an {all|any|none|not_all} object', type: 'value_error' });
    for (const [op, tags] of Object.entries(f)) {
      if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))
        issues.push({ loc: [...loc, i, op], msg: 'Input should be a list of tags', type: 'list_type' });
      else if (tags.length > 0 && !['all', 'any', 'none', 'not_all'].includes(op))
        issues.push({ loc: [...loc, i, op], msg: "Input should be 'all', 'any', 'none' or 'not_all'", type: 'enum' });
    }
  });
};

const FIELD_LETTERS = new Set(Object.values(FIELD_TYPE_LETTER));

/** `fields`: `<type letter or field type>/<field id>` or a bare type, each reported at its index. */
export const fieldsCheck: MemberCheck = (v, loc, issues) => {
  if (!Array.isArray(v) || v.length > REQUEST_LIMITS.listItems) return;
  v.forEach((f, i) => {
    if (typeof f !== 'string' || f.length > REQUEST_LIMITS.itemChars) return;
    const m = /^([a-z_]+)(?:\/(.+))?$/.exec(f);
    const head = m?.[1];
    if (!head || !(FIELD_LETTERS.has(head) || (FilterFieldTypes as readonly string[]).includes(head))) {
      issues.push({ loc: [...loc, i], msg: 'A field is <type letter>/<field id>, e.g. t/body or a/title', type: 'value_error' });
    }
  });
};
