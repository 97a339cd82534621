export { detectFileType, detectMediaType, isMediaType, MimeTypes } from './detect-file-type';
export { DocumentBuilder } from './document-builder';
export { extractEmail } from './email.extractor';
export { DEFAULT_MAX_FILE_BYTES, extractFile, extractMediaFile, MAX_MEDIA_FILE_BYTES } from './extract-file';
export { ExtractionError, type ExtractionErrorCode } from './extraction.error';
export type {
  ExtractedDocument,
  ExtractedParagraph,
  ExtractedParagraphKind,
  ExtractFileInfo,
  NestedFile,
  Ocr,
  RowsPreview,
  Transcriber,
  TranscriptSegment,
  WebPageOptions,
} from './extraction.types';
export { fetchPage, type FetchedMedia, type FetchedPage, type FetchPageOptions } from './fetch-page';
export { extractImage } from './image.extractor';
export { extractMedia, MAX_MEDIA_SECONDS, transcriptDocument, type MediaSource } from './media.extractor';
export { OpenAiTranscriber, type OpenAiTranscriberConfig } from './openai-transcriber';
export { openWhisperCppFolder, WHISPER_CPP_PROGRAM, WhisperCppTranscriber, type WhisperCppOptions } from './whisper-cpp-transcriber';
export { extractDocx, extractPptx } from './office.extractor';
export { extractPdf, type PdfOptions } from './pdf.extractor';
export { extractCsv, extractXlsx, PREVIEW_ROWS } from './spreadsheet.extractor';
export { createTesseractOcr, type TesseractOcrOptions } from './tesseract-ocr';
export { extractJson, extractMarkdown, extractPlainText } from './text.extractor';
export { extractWebPage } from './web-page.extractor';
export { xpathToCss } from './xpath-to-css';
