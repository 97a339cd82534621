import type { Request, Response } from 'express';
import type { BlobStore } from '@kb/platform/storage';

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
  const ascii = d.filename.replace(/["\\\r\n]/g, '_');
  res.setHeader('Content-Type', d.contentType || blob.stat.contentType);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Disposition', `${d.inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(d.filename)}`);
  if (blob.range) {
    res.status(206).setHeader('Content-Range', `bytes ${blob.range.start}-${blob.range.end}/${blob.stat.size}`);
    res.setHeader('Content-Length', String(blob.range.end - blob.range.start + 1));
  } else {
    res.status(200).setHeader('Content-Length', String(blob.stat.size));
  }
  blob.body.on('error', () => res.destroy());
  blob.body.pipe(res);
}
