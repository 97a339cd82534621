import sharp from 'sharp';
import { extractFile } from './extract-file';
import { ExtractionError } from './extraction.error';
import type { Ocr } from './extraction.types';
import { buildPdf, paragraphTexts, textImage } from './fixtures.testing';
import { extractPdf } from './pdf.extractor';
import { createTesseractOcr } from './tesseract-ocr';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`),
  );

describe('extractPdf', () => {
  const twoPages = buildPdf([{ lines: ['First page heading', '', '', 'Body of page one.'] }, { lines: ['Second page text.'] }], {
    title: 'Annual Report',
  });

  it('keeps the text layer per page with exact offsets and a thumbnail', async () => {
    const doc = await extractFile(twoPages, { filename: 'a.pdf' });
    expect(doc.pages).toBe(2);
    expect(paragraphTexts(doc)).toEqual(['First page heading', 'Body of page one.', 'Second page text.']);
    expect(doc.paragraphs.map((p) => [p.kind, p.page])).toEqual([
      ['TEXT', 1],
      ['TEXT', 1],
      ['TEXT', 2],
    ]);
    expect(doc.metadata).toMatchObject({ mime_type: 'application/pdf', author: 'Ada Lovelace' });
    expect(doc.title).toBe('Annual Report');
    expect(doc.thumbnail?.content_type).toBe('image/png');
    const meta = await sharp(doc.thumbnail!.data).metadata();
    expect(Math.max(meta.width!, meta.height!)).toBe(512);
  });

  it('opens an encrypted PDF with its password and reports missing or wrong passwords', async () => {
    const locked = buildPdf([{ lines: ['Secret quarterly numbers'] }], { userPassword: 'open-sesame' });
    await expect(codeOf(extractPdf(locked))).resolves.toBe('PASSWORD_REQUIRED');
    await expect(codeOf(extractPdf(locked, { password: 'nope' }))).resolves.toBe('WRONG_PASSWORD');
    const doc = await extractPdf(locked, { password: 'open-sesame' });
    expect(paragraphTexts(doc)).toEqual(['Secret quarterly numbers']);
  });

  it('reports truncated and garbage PDFs as CORRUPT_FILE', async () => {
    await expect(codeOf(extractFile(twoPages.subarray(0, 40), { filename: 'a.pdf' }))).resolves.toBe('CORRUPT_FILE');
    await expect(codeOf(extractFile(Buffer.from('%PDF-1.7\nthis is not a pdf at all'), {}))).resolves.toBe('CORRUPT_FILE');
  });

  it('OCRs pages without a text layer (kind OCR) and reports OCR failures', async () => {
    const jpeg = await textImage(['Scanned invoice total'], 'jpeg');
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    const pdf = buildPdf([{ lines: ['Cover letter'] }, { jpeg, width, height }]);
    const ocr = createTesseractOcr();
    try {
      const doc = await extractPdf(pdf, { ocr });
      const scanned = doc.paragraphs.filter((p) => p.kind === 'OCR');
      expect(scanned.length).toBeGreaterThan(0);
      expect(scanned.every((p) => p.page === 2)).toBe(true);
      expect(doc.text.slice(scanned[0]!.start, scanned[0]!.end)).toMatch(/Scanned invoice total/i);
    } finally {
      await ocr.close();
    }
    const broken: Ocr = { recognize: () => Promise.reject(new Error('engine down')), close: async () => undefined };
    await expect(codeOf(extractPdf(pdf, { ocr: broken }))).resolves.toBe('OCR_FAILED');
    // Without an OCR port the scanned page simply yields no text.
    expect(paragraphTexts(await extractPdf(pdf))).toEqual(['Cover letter']);
  });
});
