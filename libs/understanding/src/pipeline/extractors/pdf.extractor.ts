import { dirname } from 'node:path';
import { addBlankLineParagraphs, DocumentBuilder } from './document-builder';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, Ocr } from './extraction.types';
import { PDF_WORKER_SOURCE } from './pdf-worker.source';
import { runInWorker, type WorkerFailure } from './run-in-worker';
import { extractionSandbox } from './sandbox/extraction-sandbox';

export interface PdfOptions {
  password?: string;
  ocr?: Ocr;
  /** A PDF taking longer than this is abandoned (the worker is terminated). Default: the sandbox's. */
  timeoutMs?: number;
  /** Heap cap for the parsing worker thread; default: the sandbox's. */
  maxMemoryMb?: number;
}

interface WorkerPage {
  number: number;
  paragraphs: string[];
  image?: Uint8Array;
}
type WorkerSuccess = { ok: true; numPages: number; info: Record<string, string>; pages: WorkerPage[]; thumbnail?: Uint8Array };
/** What pdfjs made of a PDF, or why it could not. */
export type PdfReading = WorkerSuccess | WorkerFailure;

/** Rendering scale for OCR: 2 × 72 dpi = 144 dpi, enough for body text without huge bitmaps. */
const OCR_RENDER_SCALE = 2;
const THUMBNAIL_SIZE = 512;
// pdfjs PasswordResponses: 1 = a password is needed, 2 = the password given is wrong.
const NEED_PASSWORD = 1;

/**
 * Text layer per page via unpdf (pdfjs), each paragraph carrying its page number. Pages with no
 * text layer (scans) are rendered and OCR'd (kind OCR) when an Ocr port is given. The first page
 * is rendered as a 512 px PNG thumbnail.
 */
export async function extractPdf(data: Buffer, options: PdfOptions = {}): Promise<ExtractedDocument> {
  const sandbox = extractionSandbox();
  const result = await sandbox.run<PdfReading>({
    kind: 'pdf',
    data,
    password: options.password,
    forOcr: !!options.ocr,
    timeoutMs: options.timeoutMs ?? sandbox.limits.timeoutMs,
    maxMemoryMb: options.maxMemoryMb ?? sandbox.limits.maxMemoryMb,
  });
  if (!result.ok) throw workerError(result, options.password);
  const builder = new DocumentBuilder();
  for (const page of result.pages) {
    for (const paragraph of page.paragraphs) builder.add(paragraph, 'TEXT', { page: page.number });
    if (page.image && options.ocr) {
      let text: string;
      try {
        ({ text } = await options.ocr.recognize(Buffer.from(page.image)));
      } catch (err) {
        throw new ExtractionError(`OCR of page ${page.number} failed: ${(err as Error).message}`, 'OCR_FAILED');
      }
      addBlankLineParagraphs(builder, text, 'OCR', { page: page.number });
    }
  }
  const info = result.info;
  const metadata: Record<string, string> = {};
  for (const [from, to] of [
    ['Author', 'author'],
    ['Subject', 'subject'],
    ['Keywords', 'keywords'],
    ['Creator', 'creator'],
    ['Producer', 'producer'],
  ] as const) {
    if (info[from]) metadata[to] = info[from];
  }
  return builder.build({
    pages: result.numPages,
    metadata,
    ...(info['Title'] ? { title: info['Title'] } : {}),
    ...(result.thumbnail ? { thumbnail: { data: Buffer.from(result.thumbnail), content_type: 'image/png' } } : {}),
  });
}

function workerError(result: WorkerFailure, password: string | undefined): ExtractionError {
  if (result.name === 'PasswordException') {
    return result.code === NEED_PASSWORD && !password
      ? new ExtractionError('The PDF is password-protected; a password is required', 'PASSWORD_REQUIRED')
      : new ExtractionError('The password given for the PDF is wrong', 'WRONG_PASSWORD');
  }
  if (result.code === 'ERR_WORKER_OUT_OF_MEMORY') return new ExtractionError('The PDF needs more memory than allowed', 'TOO_LARGE');
  if (result.code === 'TIMEOUT') return new ExtractionError('The PDF took too long to read', 'TOO_LARGE');
  return new ExtractionError(`PDF could not be read: ${result.message}`, 'CORRUPT_FILE');
}

export type PdfPageRendering = { ok: true; numPages: number; image?: Uint8Array } | WorkerFailure;

/**
 * One page of a PDF as a PNG of at most `size` px on its longest side (/ask's page_image), in a
 * fresh worker thread like readPdf. Called inside the extraction sandbox's process.
 */
export function renderPdfPage(
  data: Buffer,
  options: { page: number; size: number; timeoutMs: number; maxMemoryMb: number },
): Promise<PdfPageRendering> {
  const bytes = new Uint8Array(data.byteLength);
  bytes.set(data);
  return runInWorker<{ ok: true; numPages: number; image?: Uint8Array }>(PDF_WORKER_SOURCE, {
    workerData: {
      data: bytes,
      unpdfPath: require.resolve('unpdf'),
      canvasPath: canvasPath(),
      renderScale: 0,
      thumbnailSize: 0,
      pageImage: { page: options.page, size: options.size },
    },
    transferList: [bytes.buffer],
    timeoutMs: options.timeoutMs,
    maxMemoryMb: options.maxMemoryMb,
  });
}

/** Page rendering needs a canvas; pdf-parse brings @napi-rs/canvas, resolved from its folder. */
function canvasPath(): string | undefined {
  try {
    return require.resolve('@napi-rs/canvas', { paths: [dirname(require.resolve('pdf-parse'))] });
  } catch {
    return undefined;
  }
}

/**
 * Runs pdfjs in a worker thread (unpdf's ESM-only pdfjs cannot load in jest's VM; pdfjs keeps much
 * state per document, so each PDF gets a fresh thread). Called inside the extraction sandbox's
 * process, so even an allocation that aborts the thread's isolate takes down only that process.
 */
export function readPdf(
  data: Buffer,
  options: { password?: string; forOcr: boolean; timeoutMs: number; maxMemoryMb: number },
): Promise<PdfReading> {
  const bytes = new Uint8Array(data.byteLength);
  bytes.set(data);
  return runInWorker<WorkerSuccess>(PDF_WORKER_SOURCE, {
    workerData: {
      data: bytes,
      password: options.password,
      unpdfPath: require.resolve('unpdf'),
      canvasPath: canvasPath(),
      renderScale: options.forOcr ? OCR_RENDER_SCALE : 0,
      thumbnailSize: THUMBNAIL_SIZE,
    },
    transferList: [bytes.buffer],
    timeoutMs: options.timeoutMs,
    maxMemoryMb: options.maxMemoryMb,
  });
}
