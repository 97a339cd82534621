import { createHmac, timingSafeEqual } from 'node:crypto';
import { encodeBlobKeyForUrl, isValidBlobKey } from './blob-key';

/** Path under the public base URL where the gateway serves fs-driver presigned URLs. */
export const PRESIGNED_BLOB_PATH = '/api/v1/blobs';

export interface PresignedUrlParams {
  key: string;
  /** Unix time in seconds. */
  expires: number;
  filename?: string;
  inline?: boolean;
}

export type PresignedUrlQuery = URLSearchParams | Record<string, string | string[] | undefined>;

export type PresignedUrlVerdict =
  | { valid: true; expiresAt: Date; filename?: string; inline: boolean; contentDisposition?: string }
  | { valid: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/**
 * Every parameter that changes the response is in the signed string, one per line; none of them
 * can contain a newline (keys and filenames are validated), so the encoding is unambiguous.
 */
function canonical(params: PresignedUrlParams): string {
  return ['kb-blob-get-v1', params.key, String(params.expires), params.filename ?? '', params.inline ? 'inline' : 'attachment'].join('\n');
}

export function signBlobUrl(secret: string, params: PresignedUrlParams): string {
  return createHmac('sha256', secret).update(canonical(params)).digest('hex');
}

/** Builds `${publicBaseUrl}/api/v1/blobs/<key>?expires=…&signature=…` (plus filename/inline). */
export function buildPresignedBlobUrl(publicBaseUrl: string, secret: string, params: PresignedUrlParams): string {
  const query = new URLSearchParams({ expires: String(params.expires) });
  if (params.filename !== undefined) query.set('filename', params.filename);
  if (params.inline) query.set('inline', '1');
  query.set('signature', signBlobUrl(secret, params));
  return `${publicBaseUrl.replace(/\/+$/, '')}${PRESIGNED_BLOB_PATH}/${encodeBlobKeyForUrl(params.key)}?${query.toString()}`;
}

/**
 * Checks a presigned fs URL the gateway received: `key` is the decoded path after
 * `/api/v1/blobs/`, `query` its query string. Constant-time signature check, then expiry.
 */
export function verifyPresignedBlobUrl(secret: string, key: string, query: PresignedUrlQuery, now: Date = new Date()): PresignedUrlVerdict {
  const expiresRaw = single(query, 'expires');
  const signature = single(query, 'signature');
  const filename = single(query, 'filename');
  const inlineRaw = single(query, 'inline');
  if (expiresRaw === null || signature === null || filename === null || inlineRaw === null) return { valid: false, reason: 'malformed' };
  if (!expiresRaw || !/^\d{1,12}$/.test(expiresRaw) || !signature || !/^[0-9a-f]{64}$/.test(signature))
    return { valid: false, reason: 'malformed' };
  if ((inlineRaw !== undefined && inlineRaw !== '1') || filename === '') return { valid: false, reason: 'malformed' };
  if (!isValidBlobKey(key)) return { valid: false, reason: 'malformed' };

  const params: PresignedUrlParams = { key, expires: Number(expiresRaw), filename, inline: inlineRaw === '1' };
  const expected = Buffer.from(signBlobUrl(secret, params), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return { valid: false, reason: 'bad_signature' };
  if (params.expires * 1000 <= now.getTime()) return { valid: false, reason: 'expired' };
  return {
    valid: true,
    expiresAt: new Date(params.expires * 1000),
    filename,
    inline: params.inline === true,
    contentDisposition: contentDisposition(filename, params.inline),
  };
}

/** undefined when absent, null when repeated (parameter pollution is rejected, not guessed at). */
function single(query: PresignedUrlQuery, name: string): string | undefined | null {
  if (query instanceof URLSearchParams) {
    const all = query.getAll(name);
    return all.length > 1 ? null : all[0];
  }
  const value = query[name];
  if (Array.isArray(value)) return value.length === 1 ? value[0] : null;
  return value;
}

/**
 * Content-Disposition with an ASCII fallback and the RFC 6266/5987 UTF-8 form, so non-ASCII
 * names survive and quotes in names cannot break the header.
 */
export function contentDisposition(filename?: string, inline?: boolean): string | undefined {
  if (filename === undefined && inline === undefined) return undefined;
  const type = inline ? 'inline' : 'attachment';
  if (filename === undefined) return type;
  // A lone surrogate (possible in a JSON string) would make encodeURIComponent throw.
  const wellFormed = filename.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  const fallback = wellFormed.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(wellFormed).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
