/** What a paragraph of extracted text is; TITLE marks headings, TABLE a row of a table or sheet. */
export type ExtractedParagraphKind = 'TEXT' | 'OCR' | 'TABLE' | 'TITLE';

export interface ExtractedParagraph {
  /** UTF-16 code-unit offsets into `ExtractedDocument.text`; the span is trimmed. */
  start: number;
  end: number;
  kind: ExtractedParagraphKind;
  /** 1-based page (PDF) or slide (PPTX) number. */
  page?: number;
  is_a_table?: boolean;
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
  /** Files above this size are refused with TOO_LARGE; default 100 MiB. */
  maxBytes?: number;
}

export interface WebPageOptions {
  css_selector?: string;
  xpath?: string;
}
