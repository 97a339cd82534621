import type { Request, Response } from 'express';
import { contentDisposition, type BlobStore } from '@kb/platform/storage';

export interface BlobDownload {
  key: string;
  filename: string;
  contentType?: string;
  inline: boolean;
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n`; anything else (or several ranges) is ignored as HTTP allows. */
export function parseRange(header: string | undefined): { start: number; end?: number } | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { start: -Number(m[2]) };
  return { start: Number(m[1]), ...(m[2] !== '' ? { end: Number(m[2]) } : {}) };
}

/**
 * Types a browser would run (markup, scripts, XML with its stylesheets and SVG with its scripts):
 * a tenant's upload of one, opened from our origin, would run as us. Always served as attachments.
 */
const ACTIVE_TYPE = /html|xml|svg|javascript|ecmascript|x-shockwave-flash|cache-manifest|^multipart\//i;

/** Whether a file of this type may be shown inline when the client asks (never for active types). */
export function mayBeInline(contentType: string): boolean {
  return contentType.trim() !== '' && !ACTIVE_TYPE.test(contentType);
}

/**
 * The headers every served file carries: the browser must not guess another type (nosniff), and
 * whatever it renders runs sandboxed with nothing to load (CSP), even if it is opened directly.
 */
export const SERVED_FILE_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
};

/**
 * Streams one stored object to the client, whole (200) or the asked `Range` (206); a missing
 * object is NOT_FOUND and a range outside it RANGE_NOT_SATISFIABLE, both from the store.
 */
export async function sendBlob(blobs: BlobStore, req: Request, res: Response, d: BlobDownload): Promise<void> {
  let range = parseRange(req.headers.range);
  if (range && range.start < 0) {
    // A suffix range (last n bytes) needs the size first.
    const size = (await blobs.stat(d.key))?.size ?? 0;
    range = { start: Math.max(0, size + range.start) };
  }
  const blob = await blobs.get(d.key, range ? { range } : {});
  const contentType = d.contentType || blob.stat.contentType || 'application/octet-stream';
  res.setHeader('Content-Type', contentType);
  res.setHeader('Accept-Ranges', 'bytes');
  for (const [name, value] of Object.entries(SERVED_FILE_HEADERS)) res.setHeader(name, value);
  res.setHeader('Content-Disposition', contentDisposition(d.filename || 'download', d.inline && mayBeInline(contentType)) as string);
  if (blob.range) {
    res.status(206).setHeader('Content-Range', `bytes ${blob.range.start}-${blob.range.end}/${blob.stat.size}`);
    res.setHeader('Content-Length', String(blob.range.end - blob.range.start + 1));
  } else {
    res.status(200).setHeader('Content-Length', String(blob.stat.size));
  }
  blob.body.on('error', () => res.destroy());
  blob.body.pipe(res);
}
