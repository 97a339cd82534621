import { decodeMetadataValue, encodeMetadataValue, resolveRange, validatePresignOptions, validatePutOptions } from './blob-input';

describe('byte ranges', () => {
  it.each([
    [{ start: 0 }, 10, { start: 0, end: 9 }],
    [{ start: 0, end: 0 }, 10, { start: 0, end: 0 }],
    [{ start: 2, end: 5 }, 10, { start: 2, end: 5 }],
    [{ start: 9 }, 10, { start: 9, end: 9 }],
    [{ start: 5, end: 1000 }, 10, { start: 5, end: 9 }],
  ])('resolves %j of %d bytes', (range, size, expected) => {
    expect(resolveRange(range, size)).toEqual(expected);
  });

  it.each([
    [{ start: 10 }, 10],
    [{ start: 0 }, 0],
    [{ start: 5, end: 4 }, 10],
    [{ start: -1 }, 10],
    [{ start: 1.5 }, 10],
    [{ start: 0, end: Number.NaN }, 10],
  ])('refuses %j of %d bytes', (range, size) => {
    expect(() => resolveRange(range, size)).toThrow(expect.objectContaining({ code: 'RANGE_NOT_SATISFIABLE', details: { size } }));
  });
});

describe('put options', () => {
  it('defaults the content type and keeps valid metadata', () => {
    expect(validatePutOptions()).toEqual({ contentType: 'application/octet-stream', metadata: {}, size: undefined, maxBytes: undefined });
    expect(validatePutOptions({ contentType: 'text/plain; charset="utf-8"', metadata: { 'file-name': 'x' } })).toMatchObject({
      contentType: 'text/plain; charset="utf-8"',
      metadata: { 'file-name': 'x' },
    });
  });

  it.each([
    [{ contentType: 'text' }, 'VALIDATION_FAILED'],
    [{ contentType: 'text/plain\r\nX-Evil: 1' }, 'VALIDATION_FAILED'],
    [{ metadata: { Upper: 'x' } }, 'VALIDATION_FAILED'],
    [{ metadata: { under_score: 'x' } }, 'VALIDATION_FAILED'],
    [{ metadata: { 'x-amz-acl': 'public-read' } }, 'VALIDATION_FAILED'],
    [{ metadata: { 'cache-control': 'no-store' } }, 'VALIDATION_FAILED'],
    [{ metadata: { big: 'é'.repeat(400) } }, 'VALIDATION_FAILED'],
    [{ size: -1 }, 'VALIDATION_FAILED'],
    [{ maxBytes: 1.5 }, 'VALIDATION_FAILED'],
    [{ size: 11, maxBytes: 10 }, 'PAYLOAD_TOO_LARGE'],
  ])('rejects %j', (options, code) => {
    expect(() => validatePutOptions(options)).toThrow(expect.objectContaining({ code }));
  });

  it('round-trips any metadata value through header-safe encoding', () => {
    const value = 'Résumé "final" 📄\n;=,';
    const encoded = encodeMetadataValue(value);
    expect(encoded).toMatch(/^[\x21-\x7e]*$/);
    expect(decodeMetadataValue(encoded)).toBe(value);
    expect(decodeMetadataValue('100%')).toBe('100%');
  });
});

describe('presign options', () => {
  it.each([0, -1, 1.5, 604801])('rejects expiresInSeconds=%d', (expiresInSeconds) => {
    expect(() => validatePresignOptions({ expiresInSeconds })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('rejects filenames with control characters', () => {
    expect(() => validatePresignOptions({ expiresInSeconds: 60, filename: 'a\r\nb' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    expect(() => validatePresignOptions({ expiresInSeconds: 604800, filename: 'ok.pdf' })).not.toThrow();
  });
});
