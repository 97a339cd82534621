import { buildSimpleDocx, officeBomb } from '@kb/platform/testing';
import { MimeTypes } from '../detect-file-type';
import { extractFile } from '../extract-file';
import { ExtractionError } from '../extraction.error';
import type { ExtractedDocument } from '../extraction.types';
import { closeExtractionSandbox, ExtractionSandbox } from './extraction-sandbox';
import { DEFAULT_SANDBOX_LIMITS } from './sandbox-limits';

const MiB = 1024 * 1024;
const failure = (p: Promise<unknown>): Promise<{ code: string; message: string } | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) =>
      e instanceof ExtractionError ? { code: e.code, message: e.message } : { code: 'NOT_AN_EXTRACTION_ERROR', message: String(e) },
  );
const fileTask = (data: Buffer, type: string = MimeTypes.docx) => ({
  kind: 'file' as const,
  type,
  data: new Uint8Array(data),
  zip: DEFAULT_SANDBOX_LIMITS.zip,
});

describe('extraction sandbox', () => {
  afterAll(() => closeExtractionSandbox());

  it('a DOCX bomb fails its own parse TOO_LARGE; the next document is read by the same pool', async () => {
    expect(await failure(extractFile(officeBomb('docx', 300 * MiB)))).toEqual({
      code: 'TOO_LARGE',
      message: expect.stringContaining('decompression bomb'),
    });
    const doc = await extractFile(buildSimpleDocx('Still working'));
    expect(doc.text).toBe('Still working');
  });

  it('a parser that exhausts its heap costs only its worker process (TOO_LARGE), even when the ZIP check lets it through', async () => {
    const pool = new ExtractionSandbox({ ...DEFAULT_SANDBOX_LIMITS, workers: 1, maxMemoryMb: 64 });
    try {
      const relaxed = { ...DEFAULT_SANDBOX_LIMITS.zip, maxRatio: 1e9, maxUncompressedBytes: 1024 * MiB };
      const bomb = officeBomb('docx', 200 * MiB);
      expect(await failure(pool.run({ kind: 'file', type: MimeTypes.docx, data: new Uint8Array(bomb), zip: relaxed }))).toEqual({
        code: 'TOO_LARGE',
        message: 'Reading the file needs more memory than allowed',
      });
      const doc = await pool.run<ExtractedDocument>(fileTask(buildSimpleDocx('After the crash')));
      expect(doc.text).toBe('After the crash');
    } finally {
      await pool.close();
    }
  });

  it('a parse past its wall time is terminated (TOO_LARGE); other parses of the pool go on', async () => {
    const pool = new ExtractionSandbox({ ...DEFAULT_SANDBOX_LIMITS, workers: 2, timeoutMs: 1 });
    try {
      // Starting a worker alone takes far longer than 1 ms.
      expect(await failure(pool.run(fileTask(buildSimpleDocx('x'))))).toEqual({
        code: 'TOO_LARGE',
        message: 'Reading the file took longer than 1 ms',
      });
    } finally {
      await pool.close();
    }
  });

  it('a parser error comes back as the ExtractionError the worker threw', async () => {
    const pool = new ExtractionSandbox({ ...DEFAULT_SANDBOX_LIMITS, workers: 1 });
    try {
      expect((await failure(pool.run(fileTask(Buffer.from('PK\x03\x04 truncated')))))?.code).toBe('CORRUPT_FILE');
      expect((await failure(pool.run(fileTask(Buffer.from('x'), 'application/x-unknown'))))?.code).toBe('UNSUPPORTED_TYPE');
    } finally {
      await pool.close();
    }
  });

  it('absurdly nested HTML (cheerio needs minutes for 100 000 levels) is cut off at the wall time', async () => {
    const pool = new ExtractionSandbox({ ...DEFAULT_SANDBOX_LIMITS, workers: 1, timeoutMs: 3_000 });
    try {
      const html = Buffer.from(`<html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`);
      expect(await failure(pool.run(fileTask(html, MimeTypes.html)))).toEqual({
        code: 'TOO_LARGE',
        message: 'Reading the file took longer than 3000 ms',
      });
    } finally {
      await pool.close();
    }
  });
});
