import { expressionSize, REQUEST_LIMITS } from './request-limits';
import {
  DomainError,
  ExtractedOptions,
  FieldTypes,
  ShowOptions,
  type ExtractedOption,
  type FieldType,
  type ShowOption,
  type ValidationIssue,
} from '@kb/contracts';

type Loc = (string | number)[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a JSON request body member by member, collecting every problem with its location, so a
 * client learns about all mistakes at once (422 `{detail: [{loc, msg, type}]}`). Members the
 * reader never asked about are reported as `extra_forbidden` by `finish()`.
 */
export class RequestReader {
  readonly issues: ValidationIssue[] = [];
  private readonly seen = new Set<string>();
  readonly body: Record<string, unknown>;

  constructor(
    body: unknown,
    readonly loc: Loc = ['body'],
  ) {
    if (body === undefined || body === null) body = {};
    if (!isObject(body)) {
      this.issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
      body = {};
    }
    this.body = body as Record<string, unknown>;
  }

  issue(member: string | Loc, msg: string, type = 'value_error'): void {
    this.issues.push({ loc: [...this.loc, ...(Array.isArray(member) ? member : [member])], msg, type });
  }

  raw(name: string): unknown {
    this.seen.add(name);
    return this.body[name];
  }

  has(name: string): boolean {
    this.seen.add(name);
    return this.body[name] !== undefined && this.body[name] !== null;
  }

  string(name: string, def: string, o: { max?: number; required?: boolean } = {}): string {
    const v = this.raw(name);
    if (v === undefined || v === null) {
      if (o.required) this.issue(name, 'Field required', 'missing');
      return def;
    }
    if (typeof v !== 'string') {
      this.issue(name, 'Input should be a valid string', 'string_type');
      return def;
    }
    if (o.max !== undefined && v.length > o.max) this.issue(name, `String should have at most ${o.max} characters`, 'string_too_long');
    return v;
  }

  optionalString(name: string): string | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      this.issue(name, 'Input should be a valid string', 'string_type');
      return undefined;
    }
    return v;
  }

  bool(name: string, def: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'boolean') {
      this.issue(name, 'Input should be a valid boolean', 'bool_type');
      return def;
    }
    return v;
  }

  int(name: string, def: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.issue(name, 'Input should be a valid integer', 'int_type');
      return def;
    }
    if (v < min) this.issue(name, `Input should be greater than or equal to ${min}`, 'greater_than_equal');
    else if (v > max) this.issue(name, `Input should be less than or equal to ${max}`, 'less_than_equal');
    else return v;
    return def;
  }

  number(name: string | Loc, v: unknown, o: { min?: number; max?: number } = {}): number | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      this.issue(name, 'Input should be a valid number', 'float_type');
      return undefined;
    }
    if (o.min !== undefined && v < o.min) {
      this.issue(name, `Input should be greater than or equal to ${o.min}`, 'greater_than_equal');
      return undefined;
    }
    if (o.max !== undefined && v > o.max) {
      this.issue(name, `Input should be less than or equal to ${o.max}`, 'less_than_equal');
      return undefined;
    }
    return v;
  }

  /** A list of strings, at most `maxItems` (REQUEST_LIMITS.listItems) of at most `max` (REQUEST_LIMITS.itemChars) characters. */
  stringList(name: string, o: { max?: number; maxItems?: number } = {}): string[] | undefined {
    o = { max: REQUEST_LIMITS.itemChars, maxItems: REQUEST_LIMITS.listItems, ...o };
    const v = this.raw(name);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      this.issue(name, 'Input should be a valid list', 'list_type');
      return undefined;
    }
    if (o.maxItems !== undefined && v.length > o.maxItems) {
      this.issue(name, `List should have at most ${o.maxItems} items`, 'too_long');
      return undefined;
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      if (typeof item !== 'string') this.issue([name, i], 'Input should be a valid string', 'string_type');
      else if (o.max !== undefined && item.length > o.max)
        this.issue([name, i], `String should have at most ${o.max} characters`, 'string_too_long');
      else out.push(item);
    });
    return out;
  }

  /** A list of enumeration values; an empty list means the defaults (clients send `[]` for "none chosen"). */
  enumList<T extends string>(name: string, allowed: readonly T[], def: readonly T[]): T[] {
    const list = this.stringList(name, { maxItems: REQUEST_LIMITS.enumItems });
    if (!list || list.length === 0) return [...def];
    const out: T[] = [];
    list.forEach((item, i) => {
      if (!allowed.includes(item as T)) this.issue([name, i], `Input should be ${allowed.map((a) => `'${a}'`).join(', ')}`, 'enum');
      else if (!out.includes(item as T)) out.push(item as T);
    });
    return out;
  }

  enumOf<T extends string>(name: string, allowed: readonly T[], def: T): T {
    const v = this.raw(name);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string' || !allowed.includes(v as T)) {
      this.issue(name, `Input should be ${allowed.map((a) => `'${a}'`).join(', ')}`, 'enum');
      return def;
    }
    return v as T;
  }

  date(name: string): Date | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null) return undefined;
    const d = typeof v === 'string' ? new Date(v) : undefined;
    if (!d || Number.isNaN(d.getTime())) {
      this.issue(name, 'Input should be a valid datetime', 'datetime_parsing');
      return undefined;
    }
    return d;
  }

  object(name: string): Record<string, unknown> | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null) return undefined;
    if (!isObject(v)) {
      this.issue(name, 'Input should be a valid object', 'model_type');
      return undefined;
    }
    return v;
  }

  /**
   * False (with the issue reported) when a nested expression (filter expression, legacy filter,
   * graph query) is deeper or larger than REQUEST_LIMITS allow: checked before it is parsed.
   */
  withinExpressionLimits(member: string | Loc, value: unknown): boolean {
    const { depth, nodes } = expressionSize(value);
    if (depth > REQUEST_LIMITS.expressionDepth) {
      this.issue(member, `Expression should nest at most ${REQUEST_LIMITS.expressionDepth} levels`, 'too_deep');
      return false;
    }
    if (nodes > REQUEST_LIMITS.expressionNodes) {
      this.issue(member, `Expression should have at most ${REQUEST_LIMITS.expressionNodes} values`, 'too_long');
      return false;
    }
    return true;
  }

  /** Members accepted only when unset or falsy-default: anything else is refused as not supported. */
  unsupported(name: string, why: string, allowed: (v: unknown) => boolean = (v) => v === false || v === null || v === undefined): void {
    const v = this.raw(name);
    if (!allowed(v)) this.issue(name, `Not supported: ${why}`, 'not_supported');
  }

  /** Marks members as known without reading them (accepted and without effect, documented as such). */
  accept(...names: string[]): void {
    for (const n of names) this.seen.add(n);
  }

  finish(): void {
    for (const key of Object.keys(this.body)) {
      if (!this.seen.has(key)) this.issue(key, 'Extra inputs are not permitted', 'extra_forbidden');
    }
    if (this.issues.length) throw DomainError.validation(this.issues);
  }
}

export interface SerializationOptions {
  show: ShowOption[];
  fieldTypes: FieldType[];
  extracted: ExtractedOption[];
}

/** `show`, `field_type_filter` and `extracted`, as every search endpoint reads them. */
export function readSerialization(r: RequestReader): SerializationOptions {
  const show = r.enumList('show', ShowOptions, ['basic']);
  const fieldTypes = r.enumList('field_type_filter', FieldTypes, FieldTypes);
  const extracted = r.enumList('extracted', ExtractedOptions, ['text', 'metadata', 'link', 'file']);
  return { show, fieldTypes, extracted };
}

export { isObject };
