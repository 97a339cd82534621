import { fieldBlobPrefix } from '@kb/contracts';
import type { FieldEntity } from '../entities/field.entity';
import type { OutboxEntry } from '../outbox/outbox.service';

/** A processing result names at most this many stored blobs; more is not a result of ours. */
export const MAX_RESULT_ARTEFACTS = 64;

type Held = Pick<FieldEntity, 'kbid' | 'rid' | 'fieldType' | 'fieldId' | 'value'> & Partial<Pick<FieldEntity, 'artefacts' | 'attachments'>>;

/** Where the field's own blobs live: deleting the field deletes everything under it. */
const prefixOf = (f: Held): string => fieldBlobPrefix({ kbid: f.kbid, rid: f.rid, field_type: f.fieldType, field_id: f.fieldId });
const fileOf = (f: Pick<FieldEntity, 'value'>): Record<string, unknown> => (f.value['file'] ?? {}) as Record<string, unknown>;
/** The key of a field's file when it is one of the field's own blobs (what the edge stored for it). */
function ownFileKey(f: Held): string | undefined {
  if (f.fieldType !== 'file') return undefined;
  const uri = fileOf(f)['uri'];
  const key = typeof uri === 'string' && uri.startsWith('blob:') ? uri.slice('blob:'.length) : undefined;
  return key && key.startsWith(prefixOf(f)) && !key.includes('/../') ? key : undefined;
}

const isBytes = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * A byte map as recorded (`{ key: bytes }`): entries that are not whole byte counts, or whose key is
 * not under `prefix` when one is given, are dropped; at most `max` entries are kept.
 */
export function byteMap(raw: unknown, prefix?: string, max = Number.POSITIVE_INFINITY): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  let n = 0;
  for (const [key, bytes] of Object.entries(raw)) {
    if (n >= max) break;
    if (!isBytes(bytes) || (prefix !== undefined && (!key.startsWith(prefix) || key.includes('/../')))) continue;
    out[key] = bytes;
    n += 1;
  }
  return out;
}

/**
 * Every blob these fields hold in the store, by key, with its bytes: a file field's file as the
 * edge measured it, what the field's last applied processing result stored (`artefacts`), the
 * attachments a push stored under it (`attachments`). A blob counts under the field whose prefix
 * holds it, since that is what deleting the field deletes: a value naming another field's blob
 * (or an external URL, or a released unstored file) adds nothing.
 */
export function heldBlobs(fields: Held[]): Map<string, number> {
  const held = new Map<string, number>();
  for (const f of fields) {
    const prefix = prefixOf(f);
    const key = ownFileKey(f);
    const size = fileOf(f)['size'];
    if (key && isBytes(size)) held.set(key, size);
    for (const [k, bytes] of Object.entries(byteMap(f.artefacts, prefix))) held.set(k, bytes);
    for (const [k, bytes] of Object.entries(byteMap(f.attachments, prefix))) held.set(k, bytes);
  }
  return held;
}

/** The bytes these fields hold in the store (heldBlobs summed). */
export function heldBytes(fields: Held[]): number {
  let total = 0;
  for (const bytes of heldBlobs(fields).values()) total += bytes;
  return total;
}

/**
 * What writing `written` over the resource's fields (`previous`, all of them, before the write)
 * changes in heldBytes. A written row without `artefacts` or `attachments` keeps the field's: a
 * write does not remove what processing or a push stored (it stays until replaced or deleted).
 */
export function writtenBytes(previous: Held[], written: Held[]): number {
  const key = (f: Held): string => `${f.fieldType}/${f.fieldId}`;
  const old = new Map(previous.map((f) => [key(f), f]));
  const after = new Map(old);
  for (const w of written) {
    const was = old.get(key(w));
    after.set(key(w), { ...w, artefacts: was?.artefacts, attachments: w.attachments ?? was?.attachments });
  }
  return heldBytes([...after.values()]) - heldBytes(previous);
}

/** What the edge measured of the blobs a push stored for a write: files by field id, attachments by conversation field id and key. */
export interface PushedBytes {
  files: Record<string, number>;
  attachments: Record<string, Record<string, number>>;
}

/**
 * Records the attachments a push stored on the written rows (each row keeps the field's earlier
 * ones: their blobs stay until the field goes). Every row gets the member when any does, since one
 * upsert writes a member for all its rows or for none.
 */
export function withPushedAttachments<T extends Held>(
  rows: T[],
  previous: Held[],
  attachments: PushedBytes['attachments'] | undefined,
): (T & { attachments?: Record<string, number> })[] {
  if (!attachments || Object.keys(attachments).length === 0) return rows;
  const was = new Map(previous.map((f) => [`${f.fieldType}/${f.fieldId}`, f]));
  return rows.map((r) => ({
    ...r,
    attachments: {
      ...byteMap(was.get(`${r.fieldType}/${r.fieldId}`)?.attachments),
      ...(r.fieldType === 'conversation' ? byteMap(attachments[r.fieldId]) : {}),
    },
  }));
}

/**
 * A write naming the same stored file as the field's value before it, without a size the edge
 * measured (a JSON write that repeats the `uri`), keeps the size measured then: otherwise the file
 * would stop counting while it stays in the store. Mutates and returns `rows`.
 */
export function keepMeasuredSizes<T extends Held>(previous: Held[], rows: T[]): T[] {
  const was = new Map(previous.map((f) => [`${f.fieldType}/${f.fieldId}`, f]));
  for (const r of rows) {
    const old = was.get(`${r.fieldType}/${r.fieldId}`);
    const key = ownFileKey(r);
    if (!old || !key || isBytes(fileOf(r)['size']) || ownFileKey(old) !== key) continue;
    const size = fileOf(old)['size'];
    if (isBytes(size)) r.value = { ...r.value, file: { ...fileOf(r), size } };
  }
  return rows;
}

/**
 * A write that replaces a field's stored file with another value (an external URL, another key):
 * nothing names the old blob any more and it stops counting, so it is deleted with the write.
 * Unstored files (x-skip-store) are handled by supersededUnstored.
 */
export function supersededFiles(previous: Held[], written: Held[]): OutboxEntry[] {
  const next = new Map(written.map((f) => [`${f.fieldType}/${f.fieldId}`, f]));
  const out: OutboxEntry[] = [];
  for (const old of previous) {
    const replacement = next.get(`${old.fieldType}/${old.fieldId}`);
    const key = ownFileKey(old);
    if (replacement && key && old.value['skip_store'] !== true && ownFileKey(replacement) !== key)
      out.push({ kind: 'blob_cleanup', target: key });
  }
  return out;
}

/**
 * An imported resource's fields with the blobs the import stored for it (`stored`: key → bytes as
 * the store reported them) recorded as a write records them: each blob under the field whose
 * prefix holds it — the field's own file as its `size`, a conversation's `attachments/…` as an
 * attachment, anything else as an artefact (a thumbnail: replaced by the field's next result).
 * A size the archive claims is never taken: a file the archive did not carry has none (nothing is
 * stored). `strays`: stored keys under no field of the resource (nothing would count or delete them).
 */
export function withImportedBlobs<T extends Held>(
  fields: T[],
  stored: Record<string, number>,
): { rows: (T & { artefacts: Record<string, number>; attachments: Record<string, number> })[]; strays: string[] } {
  const rows = fields.map((f) => {
    const key = ownFileKey(f);
    let value = f.value;
    if (key) {
      const { size: _claimed, ...file } = fileOf(f);
      value = { ...f.value, file: isBytes(stored[key]) ? { ...file, size: stored[key] } : file };
    }
    return { ...f, value, artefacts: {} as Record<string, number>, attachments: {} as Record<string, number> };
  });
  const strays: string[] = [];
  for (const [key, bytes] of Object.entries(byteMap(stored))) {
    const row = key.includes('/../') ? undefined : rows.find((r) => key.startsWith(prefixOf(r)));
    if (!row) strays.push(key);
    else if (ownFileKey(row) === key) continue;
    else if (row.fieldType === 'conversation' && key.startsWith(`${prefixOf(row)}attachments/`)) row.attachments[key] = bytes;
    else row.artefacts[key] = bytes;
  }
  return { rows, strays };
}
