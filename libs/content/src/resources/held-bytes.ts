import type { FieldEntity } from '../entities/field.entity';

/** A processing result names at most this many stored blobs; more is not a result of ours. */
const MAX_RECORDED = 64;

type Held = Pick<FieldEntity, 'fieldType' | 'value'> & Partial<Pick<FieldEntity, 'artefacts' | 'attachments'>>;

const isBytes = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * A byte map as recorded (`{ key: bytes }`): entries that are not whole byte counts, or whose key is
 * not under `prefix` when one is given, are dropped; at most MAX_RECORDED entries are kept.
 */
export function byteMap(raw: unknown, prefix?: string): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  let n = 0;
  for (const [key, bytes] of Object.entries(raw)) {
    if (n >= MAX_RECORDED) break;
    if (!isBytes(bytes) || (prefix !== undefined && (!key.startsWith(prefix) || key.includes('/../')))) continue;
    out[key] = bytes;
    n += 1;
  }
  return out;
}

/**
 * Every blob these fields hold in the store, by key, with its bytes: a file field's file as the
 * edge measured it (`uri` a `blob:` key; external URLs and released unstored files hold nothing),
 * what the field's last applied processing result stored (`artefacts`), the attachments a push
 * stored under it (`attachments`). By key, so a blob two fields name (an attachment naming a file
 * field's original) is one.
 */
export function heldBlobs(fields: Held[]): Map<string, number> {
  const held = new Map<string, number>();
  const add = (key: string, bytes: number): void => void held.set(key, Math.max(held.get(key) ?? 0, bytes));
  for (const f of fields) {
    if (f.fieldType === 'file') {
      const file = (f.value['file'] ?? {}) as Record<string, unknown>;
      const uri = file['uri'];
      if (typeof uri === 'string' && uri.startsWith('blob:') && isBytes(file['size']) && file['size'] > 0)
        add(uri.slice('blob:'.length), file['size']);
    }
    for (const [key, bytes] of Object.entries(byteMap(f.artefacts))) add(key, bytes);
    for (const [key, bytes] of Object.entries(byteMap(f.attachments))) add(key, bytes);
  }
  return held;
}

/** The bytes these fields hold in the store (heldBlobs summed). */
export function heldBytes(fields: Held[]): number {
  let total = 0;
  for (const bytes of heldBlobs(fields).values()) total += bytes;
  return total;
}

type Keyed = Held & Pick<FieldEntity, 'fieldId'>;

/**
 * What writing `written` over the resource's fields (`previous`, all of them, before the write)
 * changes in heldBytes. A written row without `artefacts` or `attachments` keeps the field's: a
 * write does not remove what processing or a push stored (it stays until replaced or deleted).
 */
export function writtenBytes(previous: Keyed[], written: Keyed[]): number {
  const key = (f: Keyed): string => `${f.fieldType}/${f.fieldId}`;
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
export function withPushedAttachments<T extends Keyed>(
  rows: T[],
  previous: Keyed[],
  attachments: PushedBytes['attachments'] | undefined,
): T[] {
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
