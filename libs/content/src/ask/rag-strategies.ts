import { isObject, type RequestReader } from '../search/query/request-reader';

export interface FullResource {
  name: 'full_resource';
  count?: number;
  includeRemaining: boolean;
  exclude: string[];
}
export interface FieldExtension {
  name: 'field_extension';
  fields: string[];
}
export interface Hierarchy {
  name: 'hierarchy';
  count: number;
}
export interface Neighbours {
  name: 'neighbouring_paragraphs';
  before: number;
  after: number;
}
export interface MetadataExtension {
  name: 'metadata_extension';
  types: ('origin' | 'classification_labels' | 'ners' | 'extra_metadata')[];
}
export interface Prequery {
  id: string;
  request: Record<string, unknown>;
  weight: number;
  prefilter: boolean;
}
export interface Prequeries {
  name: 'prequeries';
  queries: Prequery[];
  mainQueryWeight: number;
}
export interface Conversation {
  name: 'conversation';
  attachmentsText: boolean;
  full: boolean;
  maxMessages: number;
}

export type RagStrategy = FullResource | FieldExtension | Hierarchy | Neighbours | MetadataExtension | Prequeries | Conversation;

const NAMES = [
  'full_resource',
  'field_extension',
  'hierarchy',
  'neighbouring_paragraphs',
  'metadata_extension',
  'prequeries',
  'conversation',
  'graph_beta',
] as const;
const METADATA_TYPES = ['origin', 'classification_labels', 'ners', 'extra_metadata'] as const;

/**
 * `rag_strategies` (API-MAP 2.4): at most one of each name; full_resource cannot be combined with
 * hierarchy, neighbouring_paragraphs or field_extension (it already sends whole resources).
 */
export function readRagStrategies(r: RequestReader): RagStrategy[] {
  const raw = r.raw('rag_strategies');
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    r.issue('rag_strategies', 'Input should be a valid list', 'list_type');
    return [];
  }
  const out: RagStrategy[] = [];
  const seen = new Set<string>();
  raw.forEach((s, i) => {
    const loc = ['rag_strategies', i];
    if (!isObject(s) || typeof s['name'] !== 'string' || !NAMES.includes(s['name'] as (typeof NAMES)[number])) {
      r.issue([...loc, 'name'], `Input should be one of ${NAMES.map((n) => `'${n}'`).join(', ')}`, 'union_tag_invalid');
      return;
    }
    const name = s['name'];
    if (seen.has(name)) r.issue(loc, `rag_strategies may contain ${name} only once`, 'value_error');
    seen.add(name);
    const int = (key: string, def: number, min: number, max: number): number => {
      const v = s[key];
      if (v === undefined || v === null) return def;
      if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) {
        r.issue([...loc, key], `Input should be an integer between ${min} and ${max}`, 'int_type');
        return def;
      }
      return v as number;
    };
    const bool = (key: string, def: boolean): boolean => {
      const v = s[key];
      if (v === undefined || v === null) return def;
      if (typeof v !== 'boolean') {
        r.issue([...loc, key], 'Input should be a valid boolean', 'bool_type');
        return def;
      }
      return v;
    };
    const strings = (key: string): string[] => {
      const v = s[key];
      if (v === undefined || v === null) return [];
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
        r.issue([...loc, key], 'Input should be a list of strings', 'list_type');
        return [];
      }
      return v as string[];
    };
    switch (name) {
      case 'full_resource': {
        const applyTo = s['apply_to'];
        const exclude =
          isObject(applyTo) && Array.isArray(applyTo['exclude'])
            ? (applyTo['exclude'] as unknown[]).filter((x): x is string => typeof x === 'string')
            : [];
        const count = s['count'] === undefined || s['count'] === null ? undefined : int('count', 1, 1, 1000);
        out.push({ name, count, includeRemaining: bool('include_remaining_text_blocks', false), exclude });
        return;
      }
      case 'field_extension': {
        const fields = strings('fields');
        if (fields.length === 0) r.issue([...loc, 'fields'], 'List at least one field, e.g. t/amend or a/title', 'too_short');
        fields.forEach((f, j) => {
          if (!/^[a-z]\/[a-zA-Z0-9:_-]+$/.test(f))
            r.issue([...loc, 'fields', j], 'A field is <type letter>/<field id>, e.g. t/amend', 'value_error');
        });
        if (strings('data_augmentation_field_prefixes').length)
          r.issue([...loc, 'data_augmentation_field_prefixes'], 'Not supported: no data augmentation fields exist here', 'not_supported');
        out.push({ name, fields });
        return;
      }
      case 'hierarchy':
        out.push({ name, count: int('count', 0, 0, 1_000_000) });
        return;
      case 'neighbouring_paragraphs':
        out.push({ name, before: int('before', 2, 0, 50), after: int('after', 2, 0, 50) });
        return;
      case 'metadata_extension': {
        const types = strings('types');
        types.forEach((t, j) => {
          if (!METADATA_TYPES.includes(t as (typeof METADATA_TYPES)[number]))
            r.issue([...loc, 'types', j], `Input should be ${METADATA_TYPES.map((x) => `'${x}'`).join(', ')}`, 'enum');
        });
        out.push({
          name,
          types: types.filter((t): t is MetadataExtension['types'][number] =>
            METADATA_TYPES.includes(t as (typeof METADATA_TYPES)[number]),
          ),
        });
        return;
      }
      case 'prequeries': {
        const queries = s['queries'];
        const list: Prequery[] = [];
        if (!Array.isArray(queries) || queries.length === 0 || queries.length > 15)
          r.issue([...loc, 'queries'], 'Input should be a list of 1 to 15 prequeries', 'list_type');
        else {
          queries.forEach((q, j) => {
            if (!isObject(q) || !isObject(q['request'])) {
              r.issue([...loc, 'queries', j, 'request'], 'Input should be a find request object', 'model_type');
              return;
            }
            const weight = q['weight'] === undefined ? 1 : q['weight'];
            if (typeof weight !== 'number' || weight < 0)
              r.issue([...loc, 'queries', j, 'weight'], 'Input should be a non-negative number', 'float_type');
            list.push({
              id: typeof q['id'] === 'string' ? q['id'] : `prequery_${j}`,
              request: q['request'],
              weight: typeof weight === 'number' ? weight : 1,
              prefilter: q['prefilter'] === true,
            });
          });
        }
        const mw = s['main_query_weight'] === undefined ? 1 : s['main_query_weight'];
        if (typeof mw !== 'number' || mw < 0) r.issue([...loc, 'main_query_weight'], 'Input should be a non-negative number', 'float_type');
        out.push({ name, queries: list, mainQueryWeight: typeof mw === 'number' ? mw : 1 });
        return;
      }
      case 'conversation':
        if (s['attachments_images'] === true)
          r.issue([...loc, 'attachments_images'], 'Not supported: images are not sent to generative models', 'not_supported');
        out.push({
          name,
          attachmentsText: bool('attachments_text', false),
          full: bool('full', false),
          maxMessages: int('max_messages', 15, 1, 1000),
        });
        return;
      case 'graph_beta':
        r.issue(loc, 'Not supported: the knowledge graph strategy is not available', 'not_supported');
        return;
    }
  });
  if (seen.has('full_resource')) {
    for (const other of ['hierarchy', 'neighbouring_paragraphs', 'field_extension']) {
      if (seen.has(other)) r.issue(['rag_strategies'], `full_resource cannot be combined with ${other}`, 'value_error');
    }
  }
  return out;
}
