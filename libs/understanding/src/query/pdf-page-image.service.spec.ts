import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fileBlobKey, PDF_PAGE_IMAGE_PX } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { buildPdf } from '../pipeline/extractors/fixtures.testing';
import { closeExtractionSandbox } from '../pipeline/extractors/sandbox/extraction-sandbox';
import { PdfPageImageService } from './pdf-page-image.service';

const kbid = '3f1c1f3e-1d2b-4c3a-9e8f-0a1b2c3d4e5f';
const rid = '6f1c1f3e-1d2b-4c3a-9e8f-0a1b2c3d4e5f';
const logger = { warn: jest.fn(), info: jest.fn(), error: jest.fn(), debug: jest.fn() } as unknown as Logger;

describe('PdfPageImageService (understanding.pdf-page.render)', () => {
  let root: string;
  let blobs: BlobStore;
  let service: PdfPageImageService;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kb-pdf-page-'));
    blobs = await createBlobStore({ driver: 'fs', root, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
    service = new PdfPageImageService({} as MessageBus, blobs, logger);
    await blobs.put(fileBlobKey(kbid, rid, 'report'), buildPdf([{ lines: ['Page one.'] }, { lines: ['Page two.', 'More of it.'] }]));
    await blobs.put(
      fileBlobKey(kbid, rid, 'photo'),
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
    );
  });
  afterAll(async () => {
    await closeExtractionSandbox();
    await blobs.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('renders the named page of the field’s kept PDF as a PNG of PDF_PAGE_IMAGE_PX on its longest side', async () => {
    const { image } = await service.render({ kbid, rid, field_id: 'report', page: 2 });
    expect(image?.content_type).toBe('image/png');
    const meta = await sharp(Buffer.from(image?.b64encoded ?? '', 'base64')).metadata();
    expect(meta.format).toBe('png');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBe(PDF_PAGE_IMAGE_PX);
  }, 60_000);

  it('has no image for a page past the end, a field without a kept file, or a file that is not a PDF', async () => {
    expect(await service.render({ kbid, rid, field_id: 'report', page: 3 })).toEqual({ image: null });
    expect(await service.render({ kbid, rid, field_id: 'missing', page: 1 })).toEqual({ image: null });
    expect(await service.render({ kbid, rid, field_id: 'photo', page: 1 })).toEqual({ image: null });
  }, 60_000);
});
