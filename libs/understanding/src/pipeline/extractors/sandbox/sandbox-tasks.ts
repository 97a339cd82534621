import { MimeTypes } from '../detect-file-type';
import { extractEmail } from '../email.extractor';
import { ExtractionError } from '../extraction.error';
import type { ExtractedDocument } from '../extraction.types';
import { decodeImage } from '../image.extractor';
import { extractDocx, extractPptx } from '../office.extractor';
import { readPdf, renderPdfPage } from '../pdf.extractor';
import { extractCsv, extractXlsx } from '../spreadsheet.extractor';
import { decodeText, extractJson, extractMarkdown, extractPlainText } from '../text.extractor';
import { extractHtmlDocument } from '../web-page.extractor';
import { checkZipContainer, type ZipLimits } from '../zip-check';
import { asBuffer, type SandboxTask } from './sandbox-protocol';

/** Runs a task where it is called: inside a sandbox worker process (extraction.worker.ts) or a spec. */
export function runSandboxTask(task: SandboxTask): Promise<unknown> {
  switch (task.kind) {
    case 'file':
      return parseFile(task.type, asBuffer(task.data), task.zip);
    case 'web-page':
      return extractHtmlDocument(task.html, task.url, task.options);
    case 'image':
      return decodeImage(asBuffer(task.data), task.forOcr);
    case 'pdf':
      return readPdf(asBuffer(task.data), task);
    case 'pdf-page':
      return renderPdfPage(asBuffer(task.data), task);
  }
}

/** Every parser of untrusted bytes but PDF and media, by sniffed type. ZIP containers are measured first. */
export async function parseFile(type: string, data: Buffer, zip: ZipLimits): Promise<ExtractedDocument> {
  switch (type) {
    case MimeTypes.docx:
      await checkZipContainer(data, zip);
      return extractDocx(data);
    case MimeTypes.xlsx:
      await checkZipContainer(data, zip);
      return extractXlsx(data);
    case MimeTypes.pptx:
      await checkZipContainer(data, zip);
      return extractPptx(data);
    case MimeTypes.csv:
      return extractCsv(data);
    case MimeTypes.html:
      return extractHtmlDocument(decodeText(data), undefined);
    case MimeTypes.markdown:
      return extractMarkdown(data);
    case MimeTypes.json:
      return extractJson(data);
    case MimeTypes.eml:
      return extractEmail(data);
    default:
      // Any other text/* (text/x-log, text/x-python…) is readable as plain text.
      if (type === MimeTypes.plain || type.startsWith('text/')) return extractPlainText(data);
      throw new ExtractionError(`Files of type ${type} cannot be extracted`, 'UNSUPPORTED_TYPE');
  }
}
