import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { fileBlobKey, PDF_PAGE_IMAGE_PX, UnderstandingSubjects, type PdfPageImageRequest, type PdfPageImageResponse } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { DEFAULT_MAX_FILE_BYTES, ExtractionError } from '../pipeline/extractors';
import type { PdfPageRendering } from '../pipeline/extractors/pdf.extractor';
import { extractionSandbox } from '../pipeline/extractors/sandbox/extraction-sandbox';
import { readBlob } from '../pipeline/field-sources';

const PDF_MAGIC = Buffer.from('%PDF-');
/** A page image larger than this is not sent: the reply is one bus message (NATS: 1 MiB by default). */
const MAX_IMAGE_BYTES = 700 * 1024;

/**
 * Renders one page of a file field's kept PDF on demand (/ask's page_image, docs/ask.md "Images"):
 * a bounded number of pages per answer instead of every page of every PDF at processing. The PDF
 * is parsed in the extraction sandbox (worker process, time and memory limits) like at processing.
 * Only the field's kept original is read; a file sent with x-skip-store has none, and gets no image.
 */
@Injectable()
export class PdfPageImageService implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.bus.handle(UnderstandingSubjects.pdfPageImage, (req) => this.render(req));
  }

  async render(req: PdfPageImageRequest): Promise<PdfPageImageResponse> {
    const key = fileBlobKey(req.kbid, req.rid, req.field_id);
    if (!(await this.blobs.exists(key))) return { image: null };
    let data: Buffer;
    try {
      data = await readBlob(this.blobs, key, DEFAULT_MAX_FILE_BYTES);
    } catch (err) {
      if (err instanceof ExtractionError) return { image: null };
      throw err;
    }
    if (!data.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) return { image: null };
    const sandbox = extractionSandbox();
    let result: PdfPageRendering;
    try {
      result = await sandbox.run<PdfPageRendering>({
        kind: 'pdf-page',
        data,
        page: req.page,
        size: PDF_PAGE_IMAGE_PX,
        timeoutMs: sandbox.limits.timeoutMs,
        maxMemoryMb: sandbox.limits.maxMemoryMb,
      });
    } catch (err) {
      // A PDF the sandbox gave up on (time, memory) has no page image; the answer goes on without it.
      if (!(err instanceof ExtractionError)) throw err;
      result = { ok: false, name: 'ExtractionError', code: err.code, message: err.message };
    }
    if (!result.ok) {
      this.logger.warn(
        { kbid: req.kbid, rid: req.rid, field: req.field_id, page: req.page, err: result.message },
        'a PDF page could not be rendered',
      );
      return { image: null };
    }
    if (!result.image || result.image.byteLength > MAX_IMAGE_BYTES) return { image: null };
    return { image: { content_type: 'image/png', b64encoded: Buffer.from(result.image).toString('base64') } };
  }
}
