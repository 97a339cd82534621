import { extname } from 'node:path';

/** File types the processing pipeline reads (documents, images for OCR, e-mail, audio and video). */
const BY_EXTENSION: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.json': 'application/json',
  '.rst': 'text/x-rst',
  '.xml': 'application/xml',
  '.eml': 'message/rfc822',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.webm': 'video/webm',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
};
const SUPPORTED = new Set(Object.values(BY_EXTENSION));

export const isMedia = (contentType: string) => /^(audio|video)\//.test(contentType);

/**
 * The content type of an upload: the declared one unless it says nothing (octet-stream, missing),
 * then the one of the file name. Returns undefined for a type the service cannot process.
 */
export function resolveContentType(declared: string | undefined, filename: string | undefined): string | undefined {
  const clean = declared?.split(';')[0]?.trim().toLowerCase();
  const fromName = filename ? BY_EXTENSION[extname(filename).toLowerCase()] : undefined;
  if (!clean || clean === 'application/octet-stream' || clean === 'binary/octet-stream')
    return fromName ?? (filename ? undefined : 'application/octet-stream');
  if (SUPPORTED.has(clean) || clean.startsWith('text/') || clean.startsWith('audio/') || clean.startsWith('video/')) return clean;
  return undefined;
}

/** `x-filename` arrives plain, URL-encoded, or base64 (the reference clients send all three). */
export function decodeFilename(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let value = raw.trim();
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0 && value.length >= 8) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    // Only a decoding that gives printable text with an extension is taken as base64.
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    if (!decoded.includes('\uFFFD') && /^[^\u0000-\u001f]+\.[A-Za-z0-9]{1,8}$/.test(decoded)) value = decoded;
  }
  if (/%[0-9A-Fa-f]{2}/.test(value)) {
    try {
      value = decodeURIComponent(value);
    } catch {
      // not URL-encoded after all
    }
  }
  return value.replace(/[\\/]/g, '_').slice(0, 1024);
}
