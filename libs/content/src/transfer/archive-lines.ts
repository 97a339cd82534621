import type { ClassConstructor } from 'class-transformer';
import { collectIssues, DatetimeFieldInputDto, FIELD_ID_PATTERN, KeyValueFieldInputDto, KeywordsetFieldInputDto } from '@kb/contracts';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  ArchiveError,
  FIELD_STATUSES,
  FIELD_TYPES,
  UUID,
  type ArchiveEnd,
  type ArchiveEntitiesGroup,
  type ArchiveField,
  type ArchiveKbConfig,
  type ArchiveLimits,
  type ArchiveManifest,
  type ArchiveResource,
} from './archive-format';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fail(where: string, msg: string): never {
  throw new ArchiveError(`${where}: ${msg}`);
}

function str(o: Record<string, unknown>, key: string, where: string, max: number): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length > max) fail(where, `${key} must be a string of at most ${max} characters`);
  return v;
}

function obj(o: Record<string, unknown>, key: string, where: string): Record<string, unknown> {
  const v = o[key];
  if (!isObject(v)) fail(where, `${key} must be an object`);
  return v;
}

function objList(o: Record<string, unknown>, key: string, where: string, max: number): Record<string, unknown>[] {
  const v = o[key];
  if (!Array.isArray(v) || v.length > max || !v.every(isObject)) fail(where, `${key} must be a list of at most ${max} objects`);
  return v as Record<string, unknown>[];
}

function date(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string' || !ISO_DATE.test(v) || Number.isNaN(Date.parse(v))) fail(where, `${key} must be an ISO 8601 date`);
  return v;
}

/** Parses one JSON text (a line or a small entry); a syntax error names where it was. */
export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fail(where, 'not valid JSON');
  }
}

export function checkManifest(v: unknown): ArchiveManifest {
  const where = 'manifest.json';
  if (!isObject(v) || v['format'] !== ARCHIVE_FORMAT) fail(where, `not a ${ARCHIVE_FORMAT} archive`);
  if (v['version'] !== ARCHIVE_VERSION)
    fail(where, `unsupported archive version ${JSON.stringify(v['version'])} (this service reads version ${ARCHIVE_VERSION})`);
  const source = obj(v, 'source', where);
  if (typeof source['kbid'] !== 'string' || !UUID.test(source['kbid'])) fail(where, 'source.kbid must be a Knowledge Box id');
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    exported_at: date(v, 'exported_at', where),
    source: { kbid: source['kbid'], ...(typeof source['slug'] === 'string' ? { slug: source['slug'] } : {}) },
  };
}

export function checkKbConfig(v: unknown): ArchiveKbConfig {
  const where = 'kb.json';
  if (!isObject(v)) fail(where, 'must be an object');
  const out: ArchiveKbConfig = {};
  for (const key of ['slug', 'title', 'description'] as const)
    if (v[key] !== undefined) out[key] = str(v, key, where, key === 'description' ? 4096 : 250);
  if (v['allowed_origins'] !== undefined) {
    const origins = v['allowed_origins'];
    if (!Array.isArray(origins) || origins.length > 100 || !origins.every((o) => typeof o === 'string' && o.length <= 2048))
      fail(where, 'allowed_origins must be a list of at most 100 strings');
    out.allowed_origins = origins as string[];
  }
  if (v['search_configs'] !== undefined) out.search_configs = obj(v, 'search_configs', where);
  if (v['learning_configuration'] !== undefined) {
    const learning = obj(v, 'learning_configuration', where);
    // Secrets never travel in an archive; one that carries them is refused rather than read.
    if (learning['user_keys'] !== undefined && learning['user_keys'] !== null)
      fail(where, 'learning_configuration must not carry user_keys');
    out.learning_configuration = learning;
  }
  return out;
}

export function checkEnd(v: unknown): ArchiveEnd {
  const where = 'end.json';
  if (!isObject(v)) fail(where, 'must be an object');
  const n = (key: string) => {
    const x = v[key];
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) fail(where, `${key} must be a count`);
    return x;
  };
  return { resources: n('resources'), blobs: n('blobs') };
}

/** Field types whose value an import checks as their route checks a write. */
const CHECKED_VALUES: Record<string, ClassConstructor<object>> = {
  key_value: KeyValueFieldInputDto,
  keywordset: KeywordsetFieldInputDto,
  datetime: DatetimeFieldInputDto,
};

function checkField(v: unknown, where: string): ArchiveField {
  if (!isObject(v)) fail(where, 'a field must be an object');
  const type = v['field_type'];
  if (!(FIELD_TYPES as readonly unknown[]).includes(type)) fail(where, `field_type must be one of ${FIELD_TYPES.join(', ')}`);
  const id = v['field_id'];
  // The ids the API accepts (FIELD_ID_PATTERN, at most 250 characters): an exported KB imports again.
  if (typeof id !== 'string' || id.length > 250 || !FIELD_ID_PATTERN.test(id))
    fail(where, 'field_id must be 1 to 250 letters, digits, :, _ or -');
  const at = `${where} field ${String(type)}/${id}`;
  const status = v['status'];
  if (!(FIELD_STATUSES as readonly unknown[]).includes(status)) fail(at, `status must be one of ${FIELD_STATUSES.join(', ')}`);
  const extracted = v['extracted'];
  if (extracted !== null && !isObject(extracted)) fail(at, 'extracted must be an object or null');
  if (
    isObject(extracted) &&
    extracted['text'] !== undefined &&
    (!isObject(extracted['text']) || typeof extracted['text']['text'] !== 'string')
  )
    fail(at, 'extracted.text.text must be a string');
  const error = v['error'];
  if (error !== null && !isObject(error)) fail(at, 'error must be an object or null');
  const checked = CHECKED_VALUES[type as string];
  if (checked) {
    // The same bounds as a write through the API (keys, lengths, value types, dates).
    const issue = collectIssues(checked, v['value'], { loc: ['value'] }).issues[0];
    if (issue) fail(at, `${issue.loc.join('.')}: ${issue.msg}`);
  }
  return {
    field_type: type as ArchiveField['field_type'],
    field_id: id,
    value: obj(v, 'value', at),
    extracted: extracted as Record<string, unknown> | null,
    status: status as ArchiveField['status'],
    error: error as Record<string, unknown> | null,
    errors: objList(v, 'errors', at, 20),
    modified_at: date(v, 'modified_at', at),
  };
}

/** One resource line, every member checked; fields unique by type and id. */
export function checkResource(v: unknown, where: string, limits: Pick<ArchiveLimits, 'maxFieldsPerResource'>): ArchiveResource {
  if (!isObject(v)) fail(where, 'a resource must be an object');
  const rid = v['rid'];
  if (typeof rid !== 'string' || !UUID.test(rid)) fail(where, 'rid must be a lower-case UUID');
  const at = `${where} resource ${rid}`;
  const slug = str(v, 'slug', at, 250);
  if (!slug) fail(at, 'slug must not be empty');
  const groups = v['access_groups'];
  if (!Array.isArray(groups) || groups.length > 1000 || !groups.every((g) => typeof g === 'string' && g.length <= 250))
    fail(at, 'access_groups must be a list of strings');
  if (typeof v['hidden'] !== 'boolean') fail(at, 'hidden must be a boolean');
  const status = v['status'];
  if (!(FIELD_STATUSES as readonly unknown[]).includes(status)) fail(at, `status must be one of ${FIELD_STATUSES.join(', ')}`);
  const rawFields = v['fields'];
  if (!Array.isArray(rawFields) || rawFields.length > limits.maxFieldsPerResource)
    fail(at, `fields must be a list of at most ${limits.maxFieldsPerResource}`);
  const fields = rawFields.map((f) => checkField(f, at));
  const keys = new Set(fields.map((f) => `${f.field_type}/${f.field_id}`));
  if (keys.size !== fields.length) fail(at, 'a field appears twice');
  return {
    rid,
    slug,
    title: str(v, 'title', at, 65_536),
    summary: str(v, 'summary', at, 1_048_576),
    icon: str(v, 'icon', at, 250),
    thumbnail: str(v, 'thumbnail', at, 2048),
    metadata: obj(v, 'metadata', at),
    usermetadata: obj(v, 'usermetadata', at),
    fieldmetadata: objList(v, 'fieldmetadata', at, 10_000),
    computedmetadata: obj(v, 'computedmetadata', at),
    origin: obj(v, 'origin', at),
    extra: obj(v, 'extra', at),
    relations: objList(v, 'relations', at, 10_000),
    access_groups: groups as string[],
    hidden: v['hidden'],
    status: status as ArchiveResource['status'],
    created_at: date(v, 'created_at', at),
    modified_at: date(v, 'modified_at', at),
    fields,
  };
}

export function checkLabelSetLine(v: unknown, where: string): { id: string; body: Record<string, unknown> } {
  if (!isObject(v)) fail(where, 'a label set must be an object');
  const id = v['id'];
  if (typeof id !== 'string' || !/^[a-zA-Z0-9:_-]{1,250}$/.test(id)) fail(where, 'id must be a label set id');
  return { id, body: obj(v, 'body', `${where} label set ${id}`) };
}

export function checkEntitiesGroupLine(v: unknown, where: string): ArchiveEntitiesGroup {
  if (!isObject(v)) fail(where, 'an entities group must be an object');
  const id = v['id'];
  if (typeof id !== 'string' || id.length === 0 || id.length > 100 || id.includes('\0')) fail(where, 'id must be 1 to 100 characters');
  const at = `${where} entities group ${id}`;
  const nullableText = (key: string) => {
    const x = v[key];
    if (x !== null && (typeof x !== 'string' || x.length > 250)) fail(at, `${key} must be a string or null`);
    return x as string | null;
  };
  const deletedEntities = v['deleted_entities'];
  if (
    !Array.isArray(deletedEntities) ||
    deletedEntities.length > 10_000 ||
    !deletedEntities.every((e) => typeof e === 'string' && e.length <= 250)
  )
    fail(at, 'deleted_entities must be a list of strings');
  if (typeof v['custom'] !== 'boolean' || typeof v['deleted'] !== 'boolean') fail(at, 'custom and deleted must be booleans');
  return {
    id,
    title: nullableText('title'),
    color: nullableText('color'),
    custom: v['custom'],
    entities: obj(v, 'entities', at),
    deleted_entities: deletedEntities as string[],
    deleted: v['deleted'],
  };
}
