/** What a paragraph of extracted text is; TITLE marks headings, TABLE a row of a table or sheet. */
export type ExtractedParagraphKind = 'TEXT' | 'OCR' | 'TABLE' | 'TITLE' | 'TRANSCRIPT';

export interface ExtractedParagraph {
  /** UTF-16 code-unit offsets into `ExtractedDocument.text`; the span is trimmed. */
  start: number;
  end: number;
  kind: ExtractedParagraphKind;
  /** 1-based page (PDF) or slide (PPTX) number. */
  page?: number;
  is_a_table?: boolean;
  /** Audio and video: where the paragraph is spoken, in seconds from the start. */
  start_seconds?: number;
  end_seconds?: number;
}

export interface RowsPreview {
  rows: { cell: string[] }[];
}

export interface NestedFile {
  filename: string;
  content_type: string;
  data: Buffer;
}

export interface ExtractedDocument {
  text: string;
  /** Ordered, non-overlapping, trimmed spans of `text`. */
  paragraphs: ExtractedParagraph[];
  pages?: number;
  title?: string;
  description?: string;
  language?: string;
  image?: string;
  /** Absolute http(s) URLs found in the content, deduplicated; they are never followed. */
  links?: string[];
  metadata?: Record<string, string>;
  /** Sheet name → its first rows (spreadsheets and CSV). */
  rows_previews?: Record<string, RowsPreview>;
  /** PNG or JPEG, at most 512 px on its longer side. */
  thumbnail?: { data: Buffer; content_type: string };
  /** Files carried inside this one (e-mail attachments) that the caller extracts as well. */
  nested?: NestedFile[];
  /** Audio and video: the length transcribed, in seconds. */
  media_seconds?: number;
}

/** Optical character recognition, behind a port so tests and deployments can swap engines. */
export interface Ocr {
  recognize(image: Buffer): Promise<{ text: string; confidence: number }>;
  close(): Promise<void>;
}

export interface ExtractFileInfo {
  contentType?: string;
  filename?: string;
  password?: string;
  /** Without it, scanned PDF pages and images yield no text (images still get a thumbnail). */
  ocr?: Ocr;
  /** Files above this size are refused with TOO_LARGE; default 100 MiB (audio and video: 5 GiB). */
  maxBytes?: number;
  /** The KB's transcriber, asked for only when the file is audio or video (none configured: undefined). */
  transcriber?: () => Promise<Transcriber | undefined>;
  /** Audio and video: seconds per transcription request (default 600). */
  chunkSeconds?: number;
  /** Audio and video: the language spoken, when the client said it (else the transcriber detects it). */
  language?: string;
  /** Audio and video: where their temporary files go (default the system's temporary directory). */
  tempDir?: string;
}

/** One stretch of speech, in seconds from the start of what was sent. */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/** Speech to text, behind a port: an OpenAI-compatible endpoint here; a local model could plug in. */
export interface Transcriber {
  readonly model: string;
  /** `audio` is 16 kHz mono 16-bit PCM WAV. */
  transcribe(
    audio: Buffer,
    options: { language?: string; filename: string },
  ): Promise<{ text: string; segments: TranscriptSegment[]; language?: string }>;
}

export interface WebPageOptions {
  css_selector?: string;
  xpath?: string;
}
