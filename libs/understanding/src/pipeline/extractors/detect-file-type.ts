export const MimeTypes = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  zip: 'application/zip',
  png: 'image/png',
  jpeg: 'image/jpeg',
  tiff: 'image/tiff',
  webp: 'image/webp',
  gif: 'image/gif',
  csv: 'text/csv',
  html: 'text/html',
  markdown: 'text/markdown',
  plain: 'text/plain',
  json: 'application/json',
  eml: 'message/rfc822',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  unknown: 'application/octet-stream',
} as const;

const byExtension: Record<string, string> = {
  pdf: MimeTypes.pdf,
  docx: MimeTypes.docx,
  xlsx: MimeTypes.xlsx,
  pptx: MimeTypes.pptx,
  png: MimeTypes.png,
  jpg: MimeTypes.jpeg,
  jpeg: MimeTypes.jpeg,
  tif: MimeTypes.tiff,
  tiff: MimeTypes.tiff,
  webp: MimeTypes.webp,
  gif: MimeTypes.gif,
  csv: MimeTypes.csv,
  tsv: MimeTypes.csv,
  html: MimeTypes.html,
  htm: MimeTypes.html,
  md: MimeTypes.markdown,
  markdown: MimeTypes.markdown,
  txt: MimeTypes.plain,
  text: MimeTypes.plain,
  json: MimeTypes.json,
  eml: MimeTypes.eml,
  mp3: MimeTypes.mp3,
  wav: MimeTypes.wav,
  ogg: MimeTypes.ogg,
  oga: MimeTypes.ogg,
  opus: MimeTypes.ogg,
  flac: MimeTypes.flac,
  m4a: MimeTypes.m4a,
  mp4: MimeTypes.mp4,
  m4v: MimeTypes.mp4,
  mov: MimeTypes.mov,
  webm: MimeTypes.webm,
  mkv: MimeTypes.mkv,
  avi: MimeTypes.avi,
};

/** Content types clients send that say nothing about the bytes. */
const generic = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const aliases: Record<string, string> = {
  'image/jpg': MimeTypes.jpeg,
  'text/x-markdown': MimeTypes.markdown,
  'application/csv': MimeTypes.csv,
  'text/tab-separated-values': MimeTypes.csv,
  'text/json': MimeTypes.json,
  'application/xhtml+xml': MimeTypes.html,
};

/**
 * The file's type as a MIME type: magic bytes first (clients mislabel files), then the declared
 * content type, then the filename's extension, then a look at whether the bytes are text.
 */
export function detectFileType(data: Buffer, contentType?: string, filename?: string): string {
  const sniffed = sniffMagic(data);
  if (sniffed) return sniffed;
  const declared = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!generic.has(declared)) return aliases[declared] ?? declared;
  const ext = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase();
  if (ext && byExtension[ext]) return byExtension[ext];
  if (isZip(data)) return MimeTypes.zip;
  return sniffText(data);
}

export const isMediaType = (type: string): boolean => /^(audio|video)\//.test(type);

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/**
 * Audio or video judged by a file's first few KiB and its declared type or name, or undefined: lets
 * a recording be streamed to disk instead of read into memory. ZIP and OLE files are never media
 * here (telling them apart needs the whole file), so they take the ordinary path.
 */
export function detectMediaType(head: Buffer, contentType?: string, filename?: string): string | undefined {
  if (isZip(head) || startsWith(head, CFB_MAGIC)) return undefined;
  const type = detectFileType(head, contentType, filename);
  return isMediaType(type) ? type : undefined;
}

function startsWith(data: Buffer, bytes: number[], at = 0): boolean {
  return data.length >= at + bytes.length && bytes.every((b, i) => data[at + i] === b);
}

function sniffMagic(data: Buffer): string | undefined {
  // PDFs may carry up to 1 KiB of junk before the header, as readers tolerate.
  if (data.subarray(0, 1024).includes('%PDF-')) return MimeTypes.pdf;
  if (startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return MimeTypes.png;
  if (startsWith(data, [0xff, 0xd8, 0xff])) return MimeTypes.jpeg;
  if (startsWith(data, [0x49, 0x49, 0x2a, 0x00]) || startsWith(data, [0x4d, 0x4d, 0x00, 0x2a])) return MimeTypes.tiff;
  if (startsWith(data, [0x52, 0x49, 0x46, 0x46]) && data.subarray(8, 12).toString('latin1') === 'WEBP') return MimeTypes.webp;
  if (data.subarray(0, 6).toString('latin1') === 'GIF87a' || data.subarray(0, 6).toString('latin1') === 'GIF89a') return MimeTypes.gif;
  if (isZip(data)) return sniffZip(data);
  return sniffMedia(data);
}

/** Audio and video containers by their signatures. */
function sniffMedia(data: Buffer): string | undefined {
  const at = (from: number, to: number) => data.subarray(from, to).toString('latin1');
  if (at(0, 4) === 'RIFF' && at(8, 12) === 'WAVE') return MimeTypes.wav;
  if (at(0, 4) === 'RIFF' && at(8, 12) === 'AVI ') return MimeTypes.avi;
  if (at(0, 4) === 'OggS') return MimeTypes.ogg;
  if (at(0, 4) === 'fLaC') return MimeTypes.flac;
  if (at(0, 3) === 'ID3' || (data.length > 2 && data[0] === 0xff && ((data[1] ?? 0) & 0xe0) === 0xe0 && ((data[1] ?? 0) & 0x06) !== 0))
    return MimeTypes.mp3;
  if (at(4, 8) === 'ftyp') {
    const brand = at(8, 12);
    if (brand.startsWith('M4A') || brand.startsWith('M4B')) return MimeTypes.m4a;
    if (brand === 'qt  ') return MimeTypes.mov;
    return MimeTypes.mp4;
  }
  if (startsWith(data, [0x1a, 0x45, 0xdf, 0xa3])) return data.subarray(0, 64).includes('webm') ? MimeTypes.webm : MimeTypes.mkv;
  return undefined;
}

const isZip = (data: Buffer): boolean => startsWith(data, [0x50, 0x4b, 0x03, 0x04]) || startsWith(data, [0x50, 0x4b, 0x05, 0x06]);

/**
 * Office Open XML files are ZIPs told apart by their entries; the central directory lists them
 * uncompressed. A ZIP whose directory cannot be read (truncated) is left to the declared type, so
 * a cut-off .docx is reported as a corrupt document rather than an unsupported archive.
 */
function sniffZip(data: Buffer): string | undefined {
  const names = zipEntryNames(data);
  if (!names.length) return undefined;
  if (!names.includes('[Content_Types].xml')) return MimeTypes.zip;
  if (names.some((n) => n.startsWith('word/'))) return MimeTypes.docx;
  if (names.some((n) => n.startsWith('xl/'))) return MimeTypes.xlsx;
  if (names.some((n) => n.startsWith('ppt/'))) return MimeTypes.pptx;
  return MimeTypes.zip;
}

export function zipEntryNames(data: Buffer): string[] {
  // The end-of-central-directory record sits in the last 22 bytes plus an optional comment (≤ 64 KiB).
  const from = Math.max(0, data.length - 22 - 0xffff);
  const eocd = data.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < from || eocd + 22 > data.length) return [];
  const count = data.readUInt16LE(eocd + 10);
  let at = data.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let i = 0; i < count && at + 46 <= data.length; i++) {
    if (data.readUInt32LE(at) !== 0x02014b50) break;
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    names.push(data.subarray(at + 46, at + 46 + nameLength).toString('utf8'));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

function sniffText(data: Buffer): string {
  const head = data.subarray(0, 4096);
  if (head.includes(0)) return MimeTypes.unknown;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
  // Many replacement characters mean binary bytes rather than text in another encoding.
  const replaced = (text.match(/\uFFFD/g) ?? []).length;
  if (replaced > text.length / 50) return MimeTypes.unknown;
  const start = text.trimStart().slice(0, 512).toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html') || /^<(head|body)[\s>]/.test(start)) return MimeTypes.html;
  if (/^[{[]/.test(start)) {
    try {
      JSON.parse(data.toString('utf8'));
      return MimeTypes.json;
    } catch {
      // Not JSON after all: plain text that starts with a bracket.
    }
  }
  // An e-mail opens with a header line and carries From: or Subject: before its first blank line.
  const headers = text.split(/\r?\n\r?\n/)[0] ?? '';
  if (
    /^(return-path|received|from|message-id|mime-version|date|subject|to|delivered-to):/i.test(headers) &&
    /(^|\n)(from|subject):/i.test(headers)
  )
    return MimeTypes.eml;
  return MimeTypes.plain;
}
