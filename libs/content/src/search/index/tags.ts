import type { ResourceEntity } from '../../entities/resource.entity';

/**
 * Filter and facet tags (API-MAP 2.7): `/l/<labelset>/<label>` labels, `/t/<tag>` origin tags,
 * `/n/i/<mime>` icon, `/n/s/<STATUS>` status, `/s/p/<lang>` and `/s/s/<lang>` languages,
 * `/u/s/<source>` origin source, `/u/o/<user>` collaborators, `/m/<key>/<value>` origin metadata,
 * `/p/<path>` origin path, `/e/<TYPE>/<value>` entities, `/mt/<mime>` field mime type,
 * `/k/<kind>` paragraph kind, `/q/h` hidden. A tag never contains a NUL or a newline.
 */
const clean = (v: unknown): string =>
  String(v)
    .replace(/[\0\n\r]/g, ' ')
    .trim();

function push(out: Set<string>, prefix: string, ...parts: unknown[]): void {
  const cleaned = parts.map(clean);
  if (cleaned.some((p) => !p)) return;
  out.add(`${prefix}/${cleaned.join('/')}`);
}

export const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Labels of a classifications list, skipping those the user cancelled. */
export function labelTags(classifications: unknown): string[] {
  const out = new Set<string>();
  for (const c of arr(classifications)) {
    const o = obj(c);
    if (o['cancelled_by_user'] === true) continue;
    if (typeof o['labelset'] === 'string' && typeof o['label'] === 'string') push(out, '/l', o['labelset'], o['label']);
  }
  return [...out];
}

/** Tags that describe the resource as a whole: every paragraph of it carries them too. */
export function resourceTags(
  r: Pick<ResourceEntity, 'usermetadata' | 'computedmetadata' | 'origin' | 'metadata' | 'icon' | 'status' | 'hidden' | 'fieldmetadata'>,
): string[] {
  const out = new Set<string>(labelTags(obj(r.usermetadata)['classifications']));
  for (const fc of arr(obj(r.computedmetadata)['field_classifications'])) for (const t of labelTags(obj(fc)['classifications'])) out.add(t);
  const origin = obj(r.origin);
  for (const t of arr(origin['tags'])) push(out, '/t', t);
  for (const c of arr(origin['collaborators'])) push(out, '/u/o', c);
  if (origin['source_id']) push(out, '/u/s', origin['source_id']);
  for (const [k, v] of Object.entries(obj(origin['metadata']))) push(out, '/m', k, v);
  if (typeof origin['path'] === 'string' && origin['path']) out.add(`/p/${clean(origin['path']).replace(/^\/+/, '')}`);
  if (r.icon) push(out, '/n/i', r.icon);
  push(out, '/n/s', r.status);
  const meta = obj(r.metadata);
  if (typeof meta['language'] === 'string' && meta['language']) push(out, '/s/p', meta['language']);
  for (const l of arr(meta['languages'])) push(out, '/s/s', l);
  if (r.hidden) out.add('/q/h');
  return [...out].sort();
}

/**
 * Tags of one field: its mime type, the entities found in it (`ner` is `{value: TYPE}`), and
 * the labels users put on the field in `fieldmetadata`.
 */
export function fieldTags(mimeType: string | undefined, ner: unknown, userFieldLabels: string[]): string[] {
  const out = new Set<string>(userFieldLabels);
  if (mimeType) push(out, '/mt', mimeType);
  for (const [value, type] of Object.entries(obj(ner))) push(out, '/e', type, value);
  return [...out];
}

/** Labels users put on one field (`fieldmetadata[].field` matches `{field, field_type}`), field and paragraph level. */
export function userFieldLabels(
  fieldmetadata: Record<string, unknown>[],
  fieldType: string,
  fieldId: string,
): { field: string[]; paragraphs: Map<string, string[]> } {
  const field = new Set<string>();
  const paragraphs = new Map<string, string[]>();
  for (const fm of fieldmetadata) {
    const f = obj(fm['field']);
    if (f['field'] !== fieldId || f['field_type'] !== fieldType) continue;
    for (const t of labelTags(obj(fm['field_metadata'] ?? fm)['classifications'])) field.add(t);
    for (const p of arr(fm['paragraphs'])) {
      const po = obj(p);
      if (typeof po['key'] === 'string') paragraphs.set(po['key'], labelTags(po['classifications']));
    }
  }
  return { field: [...field], paragraphs };
}
