import { MimeTypes } from '../detect-file-type';
import type { ExtractionErrorCode } from '../extraction.error';
import type { WebPageOptions } from '../extraction.types';
import type { ZipLimits } from '../zip-check';

/** One parse asked of a sandbox worker. Bytes are copied over the IPC channel (V8 serialization). */
export type SandboxTask =
  /** Any non-media file but PDF and images, by its sniffed MIME type. */
  | { kind: 'file'; type: string; data: Uint8Array; zip: ZipLimits }
  /** A fetched HTML page, with the selector the link field names. */
  | { kind: 'web-page'; html: string; url: string; options: WebPageOptions }
  /** An image decoded by sharp: size, thumbnail and, when OCR is wanted, a PNG for it. */
  | { kind: 'image'; data: Uint8Array; forOcr: boolean }
  /** A PDF read by pdfjs in a worker thread of the sandbox process (pages, text, renders for OCR). */
  | { kind: 'pdf'; data: Uint8Array; password?: string; forOcr: boolean; timeoutMs: number; maxMemoryMb: number }
  /** One page of a PDF rendered as a PNG of at most `size` px (/ask's page_image). */
  | { kind: 'pdf-page'; data: Uint8Array; page: number; size: number; timeoutMs: number; maxMemoryMb: number };

export type SandboxRequest = { id: number; task: SandboxTask };

export type SandboxReply =
  { id: number; ok: true; result: unknown } | { id: number; ok: false; code: ExtractionErrorCode; message: string };

/** The types a 'file' task parses (besides any text/*); anything else is refused before the hop. */
export const SANDBOX_FILE_TYPES: ReadonlySet<string> = new Set([
  MimeTypes.docx,
  MimeTypes.xlsx,
  MimeTypes.pptx,
  MimeTypes.csv,
  MimeTypes.html,
  MimeTypes.markdown,
  MimeTypes.json,
  MimeTypes.eml,
  MimeTypes.plain,
]);

/** Structured clone turns a Buffer into a plain Uint8Array; this views the same bytes as a Buffer again. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
