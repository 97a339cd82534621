import { detectFileType, isMediaType, MimeTypes } from './detect-file-type';
import { asCorrupt, ExtractionError } from './extraction.error';
import type { ExtractedDocument, ExtractFileInfo } from './extraction.types';
import { extractImage } from './image.extractor';
import { extractMedia } from './media.extractor';
import { extractPdf } from './pdf.extractor';
import { extractionSandbox } from './sandbox/extraction-sandbox';
import { asBuffer, SANDBOX_FILE_TYPES } from './sandbox/sandbox-protocol';

export const DEFAULT_MAX_FILE_BYTES = 100 * 1024 * 1024;
/**
 * Audio and video are streamed to a temporary file and decoded from there, so recordings may be as
 * large as an account may upload (`upload_limit_max_media_file_size`, 5 GiB by default).
 */
export const MAX_MEDIA_FILE_BYTES = 5 * 1024 * 1024 * 1024;
const IMAGE_TYPES = new Set<string>([MimeTypes.png, MimeTypes.jpeg, MimeTypes.tiff, MimeTypes.webp, MimeTypes.gif]);
const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/**
 * Extracts a file's text and structure by its sniffed type. Always resolves to a document or
 * rejects with an ExtractionError: parser failures become CORRUPT_FILE, unknown types
 * UNSUPPORTED_TYPE.
 */
export async function extractFile(data: Buffer, info: ExtractFileInfo = {}): Promise<ExtractedDocument> {
  if (data.length === 0) throw new ExtractionError('The file is empty', 'CORRUPT_FILE');
  if (data.subarray(0, 8).equals(CFB_MAGIC)) throw compoundFileError(data);
  const type = detectFileType(data, info.contentType, info.filename);
  const maxBytes = info.maxBytes ?? (isMediaType(type) ? MAX_MEDIA_FILE_BYTES : DEFAULT_MAX_FILE_BYTES);
  if (data.length > maxBytes) throw new ExtractionError(`The file is larger than ${maxBytes} bytes`, 'TOO_LARGE');
  const doc = await asCorrupt('File', () => extractByType(type, data, info));
  return { ...doc, metadata: { ...doc.metadata, mime_type: type } };
}

async function extractByType(type: string, data: Buffer, info: ExtractFileInfo): Promise<ExtractedDocument> {
  if (type === MimeTypes.pdf) return extractPdf(data, { password: info.password, ocr: info.ocr });
  if (IMAGE_TYPES.has(type)) return extractImage(data, info.ocr);
  if (isMediaType(type)) return extractMedia(data, info, type);
  if (SANDBOX_FILE_TYPES.has(type) || type.startsWith('text/')) return parseInSandbox(type, data);
  throw new ExtractionError(`Files of type ${type} cannot be extracted`, 'UNSUPPORTED_TYPE');
}

/** Office, spreadsheets, e-mail, HTML and text are parsed in the extraction sandbox (a worker process with limits). */
async function parseInSandbox(type: string, data: Buffer): Promise<ExtractedDocument> {
  const sandbox = extractionSandbox();
  const doc = await sandbox.run<ExtractedDocument>({ kind: 'file', type, data, zip: sandbox.limits.zip });
  // Buffers may come back as plain Uint8Arrays.
  return {
    ...doc,
    ...(doc.thumbnail ? { thumbnail: { ...doc.thumbnail, data: asBuffer(doc.thumbnail.data) } } : {}),
    ...(doc.nested ? { nested: doc.nested.map((n) => ({ ...n, data: asBuffer(n.data) })) } : {}),
  };
}

/**
 * A recording too large to hold in memory, written to disk by `write`: the result extractFile
 * gives audio and video. Failures to write it (blob store, disk) are not the file's fault and
 * stay as they are, so the job is retried.
 */
export async function extractMediaFile(
  write: (path: string) => Promise<void>,
  type: string,
  info: ExtractFileInfo = {},
): Promise<ExtractedDocument> {
  const doc = await extractMedia(write, info, type);
  return { ...doc, metadata: { ...doc.metadata, mime_type: type } };
}

/** OLE compound files are legacy Office (.doc/.xls/.ppt) or password-encrypted Office Open XML. */
function compoundFileError(data: Buffer): ExtractionError {
  if (data.includes(Buffer.from('EncryptedPackage', 'utf16le'))) {
    return new ExtractionError('The Office document is password-encrypted; decrypting Office files is not supported', 'PASSWORD_REQUIRED');
  }
  return new ExtractionError('Legacy Office formats (.doc, .xls, .ppt) are not supported; save as .docx/.xlsx/.pptx', 'UNSUPPORTED_TYPE');
}
