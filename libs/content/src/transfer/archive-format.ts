/**
 * The KB archive (docs/export-format.md): a gzipped tar whose entries come in this order —
 * `manifest.json`, `kb.json`, `labelsets.jsonl`, `entities-groups.jsonl`, `synonyms.json`,
 * `kb-configs.jsonl` (saved configurations; absent from archives written before it), then
 * `resources/<n>.jsonl` parts (resources with their fields, extracted data and vectors, a bounded
 * number per part) each followed by `blobs/<rid>/<path>` (the stored files of its resources), and
 * `end.json` with the counts, so a truncated archive is told from a complete one.
 */
export const ARCHIVE_FORMAT = 'kb-archive';
export const ARCHIVE_VERSION = 1;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A path segment of a blob below its resource: no `.`/`..`, no separators, no control characters. */
const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._=-]{1,200}$/;
const PART = /^resources\/\d{6}\.jsonl$/;
export const FIXED_ENTRIES = [
  'manifest.json',
  'kb.json',
  'labelsets.jsonl',
  'entities-groups.jsonl',
  'synonyms.json',
  'kb-configs.jsonl',
  'end.json',
] as const;
export type FixedEntry = (typeof FIXED_ENTRIES)[number];

export type EntryName =
  { kind: 'fixed'; name: FixedEntry } | { kind: 'blob'; rid: string; path: string } | { kind: 'resources'; name: string };

/** Resources per `resources/<n>.jsonl` part: the writer holds one part in memory at a time. */
export const RESOURCES_PER_PART = 50;

/** What a reader accepts at most. Everything a caller can put in an archive is bounded by one of these. */
export interface ArchiveLimits {
  /** Bytes of one blob entry (the account's upload limit for files). */
  maxBlobBytes: number;
  /** Bytes of one JSON or JSON Lines entry. */
  maxJsonEntryBytes: number;
  /** Bytes of one line of a JSON Lines entry (a resource with its vectors). */
  maxLineBytes: number;
  /** Bytes of all entries together, once decompressed (archive bombs). */
  maxTotalBytes: number;
  maxEntries: number;
  maxResources: number;
  maxBlobsPerResource: number;
  maxFieldsPerResource: number;
  maxLabelSets: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxBlobBytes: 10 * 1024 ** 3,
  maxJsonEntryBytes: 512 * 1024 ** 2,
  maxLineBytes: 64 * 1024 ** 2,
  maxTotalBytes: 200 * 1024 ** 3,
  maxEntries: 2_000_000,
  maxResources: 500_000,
  maxBlobsPerResource: 200,
  maxFieldsPerResource: 500,
  maxLabelSets: 1000,
};

/**
 * Parses and checks an entry name. Anything else — absolute paths, `..`, backslashes, empty
 * segments, unknown top-level names — is refused, so no name can reach outside its resource.
 */
export function parseEntryName(name: string): EntryName | undefined {
  if (name.length > 400 || name.includes('\\') || name.includes('\0')) return undefined;
  if ((FIXED_ENTRIES as readonly string[]).includes(name)) return { kind: 'fixed', name: name as FixedEntry };
  if (PART.test(name)) return { kind: 'resources', name };
  const parts = name.split('/');
  if (parts[0] !== 'blobs' || parts.length < 3) return undefined;
  const rid = parts[1] as string;
  const rest = parts.slice(2);
  if (!UUID.test(rid) || rest.some((s) => !SEGMENT.test(s))) return undefined;
  return { kind: 'blob', rid, path: rest.join('/') };
}

export const blobEntryName = (rid: string, path: string): string => `blobs/${rid}/${path}`;
export const partEntryName = (n: number): string => `resources/${String(n).padStart(6, '0')}.jsonl`;

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  exported_at: string;
  source: { kbid: string; slug?: string };
}

export interface ArchiveEnd {
  resources: number;
  blobs: number;
}

/** The KB's configuration, never a secret: `learning_configuration` without `user_keys`. */
export interface ArchiveKbConfig {
  slug?: string;
  title?: string;
  description?: string;
  allowed_origins?: string[];
  search_configs?: Record<string, unknown>;
  learning_configuration?: Record<string, unknown>;
}

export const FIELD_TYPES = ['text', 'file', 'link', 'conversation', 'key_value', 'keywordset', 'datetime'] as const;
export const FIELD_STATUSES = ['PENDING', 'PROCESSED', 'ERROR'] as const;

export interface ArchiveField {
  field_type: (typeof FIELD_TYPES)[number];
  field_id: string;
  value: Record<string, unknown>;
  extracted: Record<string, unknown> | null;
  status: (typeof FIELD_STATUSES)[number];
  error: Record<string, unknown> | null;
  errors: Record<string, unknown>[];
  modified_at: string;
}

/** One line of a `resources/<n>.jsonl` part. */
export interface ArchiveResource {
  rid: string;
  slug: string;
  title: string;
  summary: string;
  icon: string;
  thumbnail: string;
  metadata: Record<string, unknown>;
  usermetadata: Record<string, unknown>;
  fieldmetadata: Record<string, unknown>[];
  computedmetadata: Record<string, unknown>;
  origin: Record<string, unknown>;
  extra: Record<string, unknown>;
  relations: Record<string, unknown>[];
  access_groups: string[];
  hidden: boolean;
  status: (typeof FIELD_STATUSES)[number];
  created_at: string;
  modified_at: string;
  fields: ArchiveField[];
}

export interface ArchiveEntitiesGroup {
  id: string;
  title: string | null;
  color: string | null;
  custom: boolean;
  entities: Record<string, unknown>;
  deleted_entities: string[];
  deleted: boolean;
}

/** A line or entry that breaks the format: the import stops with this message. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}
