/**
 * Blob keys of the files a field holds. A file kept as the field's original lives at a fixed key
 * (a new upload replaces it). A file written with `x-skip-store: true` is only lent to processing:
 * it gets a directory of its own per write (`unstored/<upload id>/`), so deleting it once processed
 * can never remove the bytes of a later upload to the same field.
 */
export function fileBlobKey(kbid: string, rid: string, fieldId: string): string {
  return `content/kbs/${kbid}/r/${rid}/f/file/${fieldId}/original`;
}

export function unstoredFileKey(kbid: string, rid: string, fieldId: string, uploadId: string): string {
  return `content/kbs/${kbid}/r/${rid}/f/file/${fieldId}/unstored/${uploadId}/original`;
}

const UPLOAD_ID = /^[0-9a-f-]{8,64}$/;

/**
 * The directory (ending in `/`) of an unstored file, when `uri` is `blob:<key>` of one that belongs
 * to exactly this field; otherwise undefined (kept files, external addresses, foreign keys).
 */
export function unstoredFileDir(ids: { kbid: string; rid: string; field_id: string }, uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !uri.startsWith('blob:')) return undefined;
  const base = `content/kbs/${ids.kbid}/r/${ids.rid}/f/file/${ids.field_id}/unstored/`;
  const key = uri.slice('blob:'.length);
  if (!key.startsWith(base) || !key.endsWith('/original')) return undefined;
  const uploadId = key.slice(base.length, -'/original'.length);
  return UPLOAD_ID.test(uploadId) ? `${base}${uploadId}/` : undefined;
}

/**
 * Files sent to the understanding API's Upload Binary File (or its TUS routes) wait here, per
 * account, until a push names their token; the push moves them into the resource and the staged
 * copy goes. Tokens are random (32 bytes, base64url), so they cannot be guessed or enumerated, and
 * the account in the key keeps one account's token useless to another.
 */
export const PROCESSING_UPLOADS_PREFIX = 'processing/uploads/';
export const PROCESSING_UPLOAD_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function processingUploadKey(accountId: string, token: string): string {
  return `${PROCESSING_UPLOADS_PREFIX}${accountId}/${token}`;
}

/** Where a pushed attachment of a conversation message is kept (under the resource, deleted with it). */
export function pushedAttachmentKey(kbid: string, rid: string, fieldId: string, token: string): string {
  return `content/kbs/${kbid}/r/${rid}/f/conversation/${fieldId}/attachments/${token}`;
}

/**
 * Files of the built-in models, published to the blob store by the understanding service so the
 * edge can serve Download Account Predictive Model File without reaching into another app.
 */
export function modelFileKey(modelId: string, filename: string): string {
  return `models/${modelId}/${filename}`;
}
