/** A stored file named in a field's extracted data (spec 2.3 file reference). */
export interface ArtefactReference {
  key: string;
  /** Name under the field: its member path without the group, e.g. `file_thumbnail`, `thumbnail`, `file_generated/x.md`. */
  name: string;
  filename?: string;
  content_type?: string;
}

// Groups of the extracted record; `metadata.metadata` is one more wrapper.
const GROUPS = new Set(['metadata', 'file', 'link']);
// Never artefacts, and large: not walked.
const SKIPPED = new Set([
  'text',
  'vectors',
  'large_metadata',
  'question_answers',
  'paragraphs',
  'split_metadata',
  'positions',
  'ner',
  'entities',
  'relations',
]);
const MAX_DEPTH = 8;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function walk(node: unknown, path: string[], out: ArtefactReference[]): void {
  if (!isObject(node) || path.length > MAX_DEPTH) return;
  const uri = (node as Record<string, unknown>)['uri'];
  if (!Array.isArray(node) && typeof uri === 'string' && uri.startsWith('blob:')) {
    const n = node as Record<string, unknown>;
    const members = path.slice(1);
    if (path[0] === 'metadata' && members[0] === 'metadata') members.shift();
    out.push({
      key: uri.slice('blob:'.length),
      name: members.join('/'),
      ...(typeof n['filename'] === 'string' && n['filename'] ? { filename: n['filename'] } : {}),
      ...(typeof n['content_type'] === 'string' && n['content_type'] ? { content_type: n['content_type'] } : {}),
    });
    return;
  }
  for (const [k, v] of Object.entries(node)) if (!SKIPPED.has(k)) walk(v, [...path, k], out);
}

/** Every stored artefact (thumbnails, previews, generated files) a field's extracted record names. */
export function artefactsOf(extracted: Record<string, unknown> | null | undefined): ArtefactReference[] {
  const out: ArtefactReference[] = [];
  for (const [group, value] of Object.entries(extracted ?? {})) if (GROUPS.has(group)) walk(value, [group], out);
  return out;
}

/**
 * The artefact `downloadField` names: its key under the field's blob prefix (`thumbnail`) or its
 * member name (`file_thumbnail`, `link_thumbnail`, `file_generated/<name>`). Only objects under the
 * field's own prefix qualify, and never the original file.
 */
export function findArtefact(
  extracted: Record<string, unknown> | null | undefined,
  fieldPrefix: string,
  downloadField: string,
): ArtefactReference | undefined {
  const wanted = downloadField.replace(/^\/+/, '');
  if (!wanted || wanted.split('/').some((s) => s === '..' || s === '.' || s === '')) return undefined;
  return artefactsOf(extracted).find(
    (a) =>
      a.key.startsWith(fieldPrefix) && a.key !== `${fieldPrefix}original` && (a.key === `${fieldPrefix}${wanted}` || a.name === wanted),
  );
}
