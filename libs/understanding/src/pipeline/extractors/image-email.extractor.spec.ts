import sharp from 'sharp';
import { extractFile } from './extract-file';
import { ExtractionError } from './extraction.error';
import type { Ocr } from './extraction.types';
import { paragraphTexts, textImage } from './fixtures.testing';
import { createTesseractOcr } from './tesseract-ocr';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`),
  );

describe('images', () => {
  const ocr = createTesseractOcr();
  afterAll(() => ocr.close());

  it.each(['png', 'jpeg', 'webp', 'tiff'] as const)('%s: OCR text (kind OCR) and a ≤ 512 px JPEG thumbnail', async (format) => {
    const image = await textImage(['Invoice number 4711', 'Payment due in March'], format, 1200);
    const doc = await extractFile(image, { ocr });
    expect(doc.metadata?.['mime_type']).toBe(`image/${format}`);
    expect(doc.text).toMatch(/Invoice number 4711/);
    expect(doc.text).toMatch(/Payment due in March/);
    expect(doc.paragraphs.every((p) => p.kind === 'OCR')).toBe(true);
    expect(paragraphTexts(doc).join('\n')).toMatch(/Invoice/);
    const thumb = await sharp(doc.thumbnail!.data).metadata();
    expect(doc.thumbnail!.content_type).toBe('image/jpeg');
    expect(thumb.format).toBe('jpeg');
    expect(Math.max(thumb.width!, thumb.height!)).toBe(512);
  });

  it('without OCR an image still gets its thumbnail; broken OCR is OCR_FAILED; broken images CORRUPT_FILE', async () => {
    const png = await textImage(['x']);
    const doc = await extractFile(png, {});
    expect(doc.paragraphs).toEqual([]);
    expect(doc.thumbnail).toBeDefined();
    const broken: Ocr = { recognize: () => Promise.reject(new Error('no engine')), close: async () => undefined };
    await expect(codeOf(extractFile(png, { ocr: broken }))).resolves.toBe('OCR_FAILED');
    await expect(codeOf(extractFile(png.subarray(0, 60), {}))).resolves.toBe('CORRUPT_FILE');
  });
});

describe('e-mail', () => {
  const eml = [
    'From: Ann Example <ann@example.com>',
    'To: Bob <bob@example.org>, carol@example.org',
    'Subject: Project update',
    'Date: Tue, 02 Jan 2024 10:00:00 +0000',
    'Message-ID: <m1@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="XX"',
    '',
    '--XX',
    'Content-Type: multipart/alternative; boundary="YY"',
    '',
    '--YY',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hi Bob,',
    '',
    'the report is at https://reports.example.com/q1.',
    '--YY',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Hi Bob,</p><p>the report is at <a href="https://reports.example.com/q1">q1</a> and <a href="https://wiki.example.com/p">wiki</a>.</p>',
    '--YY--',
    '--XX',
    'Content-Type: text/csv; name="numbers.csv"',
    'Content-Disposition: attachment; filename="numbers.csv"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('a,b\n1,2\n').toString('base64'),
    '--XX--',
    '',
  ].join('\r\n');

  it('subject as title, plain body, addresses and date in metadata, links, attachments nested', async () => {
    const doc = await extractFile(Buffer.from(eml), { filename: 'mail.eml' });
    expect(paragraphTexts(doc)).toEqual(['Project update', 'Hi Bob,', 'the report is at https://reports.example.com/q1.']);
    expect(doc.paragraphs[0]!.kind).toBe('TITLE');
    expect(doc.title).toBe('Project update');
    expect(doc.metadata).toMatchObject({
      from: '"Ann Example" <ann@example.com>',
      date: '2024-01-02T10:00:00.000Z',
      message_id: '<m1@example.com>',
    });
    expect(doc.metadata?.['to']).toContain('carol@example.org');
    expect(doc.links).toEqual(['https://reports.example.com/q1', 'https://wiki.example.com/p']);
    expect(doc.nested).toHaveLength(1);
    expect(doc.nested![0]).toMatchObject({ filename: 'numbers.csv', content_type: 'text/csv' });
    const nested = await extractFile(doc.nested![0]!.data, { contentType: doc.nested![0]!.content_type });
    expect(paragraphTexts(nested)).toEqual(['a | b', '1 | 2']);
  });

  it('an HTML-only e-mail yields the HTML body text', async () => {
    const htmlOnly = 'From: a@b.c\r\nSubject: Hello\r\nContent-Type: text/html\r\n\r\n<h1>News</h1><p>Body <b>text</b></p>';
    const doc = await extractFile(Buffer.from(htmlOnly), { contentType: 'message/rfc822' });
    expect(paragraphTexts(doc)).toEqual(['Hello', 'News', 'Body text']);
  });
});
