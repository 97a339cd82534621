import { buildSimpleDocx, buildZip, officeBomb } from '@kb/platform/testing';
import { ExtractionError } from './extraction.error';
import { checkZipContainer, DEFAULT_ZIP_LIMITS, type ZipLimits } from './zip-check';

const MiB = 1024 * 1024;
const refusal = (data: Buffer, limits?: ZipLimits): Promise<{ code: string; message: string } | undefined> =>
  checkZipContainer(data, limits).then(
    () => undefined,
    (e: unknown) =>
      e instanceof ExtractionError ? { code: e.code, message: e.message } : { code: 'NOT_AN_EXTRACTION_ERROR', message: String(e) },
  );

describe('ZIP container pre-check', () => {
  it('lets an ordinary document through', async () => {
    expect(await refusal(buildSimpleDocx('Hello'))).toBeUndefined();
  });

  it('refuses more entries than allowed', async () => {
    const zip = buildZip(Array.from({ length: 5 }, (_, i) => ({ name: `part${i}.xml`, data: '<x/>' })));
    expect(await refusal(zip, { ...DEFAULT_ZIP_LIMITS, maxEntries: 4 })).toEqual({
      code: 'TOO_LARGE',
      message: expect.stringContaining('5 parts (at most 4 allowed)'),
    });
    expect(await refusal(zip, { ...DEFAULT_ZIP_LIMITS, maxEntries: 5 })).toBeUndefined();
  });

  it('refuses parts declaring more than the total allowed, without inflating them', async () => {
    const zip = buildZip([
      { name: 'a.xml', data: Buffer.alloc(3 * MiB, 'a') },
      { name: 'b.xml', data: Buffer.alloc(3 * MiB, 'b') },
    ]);
    const limits = { ...DEFAULT_ZIP_LIMITS, maxUncompressedBytes: 5 * MiB, maxRatio: 10_000 };
    expect(await refusal(zip, limits)).toEqual({
      code: 'TOO_LARGE',
      message: expect.stringContaining(`expand to more than ${5 * MiB} bytes`),
    });
  });

  it('refuses a part that expands more than the ratio allows (a 1 MB file of 300 MB), but not a small one', async () => {
    const bomb = officeBomb('docx', 300 * MiB);
    expect(bomb.length).toBeLessThan(2 * MiB);
    expect(await refusal(bomb)).toEqual({
      code: 'TOO_LARGE',
      message: expect.stringMatching(/part word\/document\.xml expands \d+ times \(at most 200 allowed\)/),
    });
    // Below the floor, a highly compressible part is harmless.
    expect(await refusal(buildZip([{ name: 'zeros.xml', data: Buffer.alloc(MiB - 1) }]))).toBeUndefined();
  });

  it('stops a part that inflates beyond the size it declares', async () => {
    const liar = officeBomb('xlsx', 64 * MiB, { lie: true });
    expect(await refusal(liar)).toEqual({
      code: 'TOO_LARGE',
      message: expect.stringContaining('expands beyond the 1024 bytes it declares'),
    });
  });

  it('reports bytes that are not a ZIP as a corrupt file', async () => {
    expect((await refusal(Buffer.from('PK\x03\x04 not really a zip')))?.code).toBe('CORRUPT_FILE');
    const docx = buildSimpleDocx('Hello');
    expect((await refusal(docx.subarray(0, docx.length - 30)))?.code).toBe('CORRUPT_FILE');
  });
});
