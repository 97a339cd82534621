import type { DataSource } from 'typeorm';
import { ASK_IMAGE_LIMITS, decodedLength, PROCESSING_UPLOAD_TOKEN, pushedAttachmentKey, sniffAskImageType } from '@kb/contracts';
import type { BlobStore } from '@kb/platform/storage';
import type { Logger } from '@kb/platform/observability';
import type { GenerationImage } from './generation';

/** A context paragraph of a conversation field: its key, resource, field (`c/<id>`) and message (`split`). */
export interface MessageContextItem {
  key: string;
  rid: string;
  field?: string;
  split?: string;
}

type AttachmentRow = {
  rid: string;
  field_id: string;
  ident: string;
  j: number;
  uri: string | null;
  size: number | null;
  payload: string | null;
};

const BLOB_PREFIX = 'blob:';
/** base64 characters of an image of maxImageBytes: larger inline payloads are not even read from the database. */
const MAX_B64 = Math.ceil(ASK_IMAGE_LIMITS.maxImageBytes / 3) * 4;

/**
 * The images attached to the conversation messages of an answer's context (the conversation
 * strategy's `attachments_images`, docs/ask.md "Images"), in context order then attachment order.
 * Only messages already in the context are looked at (retrieval filtered them by security groups and
 * hidden resources). Bounded like the caller's images: at most maxAttachmentImages, each at most
 * maxImageBytes decoded and maxTotalBytes together; the bytes decide the type (PNG, JPEG, WebP, GIF),
 * whatever the attachment's label. Attachments kept inline in the message are read from the field
 * row, those a push stored only from under the field's own attachments prefix; external addresses
 * are never fetched.
 */
export async function conversationImages(
  deps: { ds: DataSource; blobs: BlobStore; logger: Logger },
  kbid: string,
  context: MessageContextItem[],
  signal?: AbortSignal,
): Promise<GenerationImage[]> {
  const messages = context.filter((c) => c.rid && c.field?.startsWith('c/') && c.split);
  if (!messages.length) return [];
  const ids = [...new Set(messages.map((c) => `${c.rid}/${(c.field as string).slice(2)}/${c.split}`))];
  const rows = (await deps.ds.query(
    `SELECT f.rid::text AS rid, f.field_id, m->>'ident' AS ident, a.j::int AS j, a.att->>'uri' AS uri,
            length(a.att->>'payload') AS size,
            CASE WHEN length(a.att->>'payload') <= $3 THEN a.att->>'payload' END AS payload
       FROM content.fields f
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(f.value->'messages') = 'array' THEN f.value->'messages' ELSE '[]'::jsonb END) m
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(m->'content'->'attachments') = 'array' THEN m->'content'->'attachments' ELSE '[]'::jsonb END)
            WITH ORDINALITY a(att, j)
      WHERE f.kbid = $1 AND f.field_type = 'conversation' AND (f.rid::text || '/' || f.field_id || '/' || (m->>'ident')) = ANY($2::text[])`,
    [kbid, ids, MAX_B64],
  )) as AttachmentRow[];
  const byMessage = new Map<string, AttachmentRow[]>();
  for (const r of rows) {
    const id = `${r.rid}/${r.field_id}/${r.ident}`;
    byMessage.set(id, [...(byMessage.get(id) ?? []), r]);
  }
  const out: GenerationImage[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const c of messages) {
    const fieldId = (c.field as string).slice(2);
    const id = `${c.rid}/${fieldId}/${c.split}`;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const r of (byMessage.get(id) ?? []).sort((a, b) => a.j - b.j)) {
      if (out.length >= ASK_IMAGE_LIMITS.maxAttachmentImages) return out;
      signal?.throwIfAborted();
      const data = await attachmentBytes(deps, kbid, r, fieldId);
      if (!data || data.length > ASK_IMAGE_LIMITS.maxImageBytes || total + data.length > ASK_IMAGE_LIMITS.maxTotalBytes) continue;
      const mediaType = sniffAskImageType(data);
      if (!mediaType) continue;
      total += data.length;
      out.push({ mediaType, data: data.toString('base64'), key: `${c.key}/attachments/${r.j - 1}` });
    }
  }
  return out;
}

/** An attachment's bytes when they can be had within the bound; undefined otherwise (not an error: the answer goes on). */
async function attachmentBytes(
  deps: { blobs: BlobStore; logger: Logger },
  kbid: string,
  r: AttachmentRow,
  fieldId: string,
): Promise<Buffer | undefined> {
  if (r.size !== null) {
    if (r.payload === null || decodedLength(r.payload) > ASK_IMAGE_LIMITS.maxImageBytes) return undefined;
    return Buffer.from(r.payload, 'base64');
  }
  const uri = r.uri ?? '';
  if (!uri.startsWith(BLOB_PREFIX)) return undefined;
  const key = uri.slice(BLOB_PREFIX.length);
  // Only what a push stored under this very field: a stored value naming another key is not followed.
  const prefix = pushedAttachmentKey(kbid, r.rid, fieldId, '');
  if (!key.startsWith(prefix) || !PROCESSING_UPLOAD_TOKEN.test(key.slice(prefix.length))) return undefined;
  try {
    return await blobAtMost(deps.blobs, key, ASK_IMAGE_LIMITS.maxImageBytes);
  } catch (err) {
    deps.logger.warn(
      { kbid, rid: r.rid, field: fieldId, err: (err as Error).message },
      'a conversation attachment could not be read; sent without it',
    );
    return undefined;
  }
}

/**
 * A blob's bytes when it exists and holds at most `max` bytes, else undefined: its stated size is
 * checked first and the bytes are counted again while read, so a blob that grows is never read past `max`.
 */
export async function blobAtMost(blobs: BlobStore, key: string, max: number): Promise<Buffer | undefined> {
  const stat = await blobs.stat(key);
  if (!stat || stat.size > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of (await blobs.get(key)).body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
