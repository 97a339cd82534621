import { buildPresignedBlobUrl, contentDisposition, signBlobUrl, verifyPresignedBlobUrl } from './presigned-url';

const SECRET = 'unit-test-secret-unit-test-secret';
const KEY = 'content/kbs/kb1/r/r1/f/file/original';
const NOW = new Date('2024-05-01T12:00:00Z');
const EXPIRES = NOW.getTime() / 1000 + 60;

describe('presigned blob URLs', () => {
  it('signs deterministically over every parameter', () => {
    const base = { key: KEY, expires: EXPIRES };
    const sig = signBlobUrl(SECRET, base);
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(signBlobUrl(SECRET, base)).toBe(sig);
    const variants = [
      { ...base, key: `${KEY}2` },
      { ...base, expires: EXPIRES + 1 },
      { ...base, filename: 'a.pdf' },
      { ...base, inline: true },
    ];
    for (const v of variants) expect(signBlobUrl(SECRET, v)).not.toBe(sig);
    expect(signBlobUrl(`${SECRET}x`, base)).not.toBe(sig);
  });

  it('builds a URL under the base URL that verifies', () => {
    const url = new URL(buildPresignedBlobUrl('https://zone.example.com/', SECRET, { key: KEY, expires: EXPIRES, filename: 'a b.pdf' }));
    expect(url.pathname).toBe(`/api/v1/blobs/${KEY}`);
    expect(url.searchParams.get('filename')).toBe('a b.pdf');
    expect(url.searchParams.has('inline')).toBe(false);
    expect(verifyPresignedBlobUrl(SECRET, KEY, url.searchParams, NOW)).toEqual({
      valid: true,
      expiresAt: new Date(EXPIRES * 1000),
      filename: 'a b.pdf',
      inline: false,
      contentDisposition: 'attachment; filename="a b.pdf"; filename*=UTF-8\'\'a%20b.pdf',
    });
  });

  it.each([
    ['a tampered key', { key: `${KEY}x` }, 'bad_signature'],
    ['an added filename', { filename: 'x.html' }, 'bad_signature'],
    ['an added inline flag', { inline: '1' }, 'bad_signature'],
    ['a moved expiry', { expires: String(EXPIRES + 60) }, 'bad_signature'],
    ['a bad inline value', { inline: 'yes' }, 'malformed'],
    ['an empty filename', { filename: '' }, 'malformed'],
    ['a non-numeric expiry', { expires: '12a' }, 'malformed'],
    ['a short signature', { signature: 'abc' }, 'malformed'],
    ['an invalid key', { key: '../x' }, 'malformed'],
  ])('rejects %s', (_label, change: Record<string, string>, reason) => {
    const query: Record<string, string> = { expires: String(EXPIRES), signature: signBlobUrl(SECRET, { key: KEY, expires: EXPIRES }) };
    const { key = KEY, ...rest } = change;
    expect(verifyPresignedBlobUrl(SECRET, key, { ...query, ...rest }, NOW)).toEqual({ valid: false, reason });
  });

  it('expires at the stated second', () => {
    const query = { expires: String(EXPIRES), signature: signBlobUrl(SECRET, { key: KEY, expires: EXPIRES }) };
    expect(verifyPresignedBlobUrl(SECRET, KEY, query, new Date(EXPIRES * 1000 - 1)).valid).toBe(true);
    expect(verifyPresignedBlobUrl(SECRET, KEY, query, new Date(EXPIRES * 1000))).toEqual({ valid: false, reason: 'expired' });
  });

  it('rejects repeated parameters in either query shape', () => {
    const signature = signBlobUrl(SECRET, { key: KEY, expires: EXPIRES });
    expect(verifyPresignedBlobUrl(SECRET, KEY, { expires: String(EXPIRES), signature: [signature, signature] }, NOW)).toEqual({
      valid: false,
      reason: 'malformed',
    });
    expect(verifyPresignedBlobUrl(SECRET, KEY, { expires: String(EXPIRES), signature: [signature] }, NOW).valid).toBe(true);
  });

  it.each([
    [undefined, undefined, undefined],
    [undefined, true, 'inline'],
    [undefined, false, 'attachment'],
    ['a.pdf', undefined, 'attachment; filename="a.pdf"; filename*=UTF-8\'\'a.pdf'],
    ['ü "q".pdf', true, 'inline; filename="_ _q_.pdf"; filename*=UTF-8\'\'%C3%BC%20%22q%22.pdf'],
    ["it's (1).txt", false, "attachment; filename=\"it's (1).txt\"; filename*=UTF-8''it%27s%20%281%29.txt"],
    ['報告書.pdf', false, 'attachment; filename="___.pdf"; filename*=UTF-8\'\'%E5%A0%B1%E5%91%8A%E6%9B%B8.pdf'],
    [
      '🎉 a\\b\r\nSet-Cookie: x.txt',
      false,
      'attachment; filename="__ a_b__Set-Cookie: x.txt"; filename*=UTF-8\'\'%F0%9F%8E%89%20a%5Cb%0D%0ASet-Cookie%3A%20x.txt',
    ],
    ['lone \uD800 surrogate', false, 'attachment; filename="lone _ surrogate"; filename*=UTF-8\'\'lone%20%EF%BF%BD%20surrogate'],
  ])('writes Content-Disposition for %j inline=%j', (filename, inline, expected) => {
    expect(contentDisposition(filename, inline)).toBe(expected);
  });
});
