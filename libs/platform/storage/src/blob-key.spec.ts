import { DomainError } from '@kb/contracts';
import { assertValidBlobKey, blobKeyProblem, blobPrefixProblem, encodeBlobKeyForUrl, isValidBlobKey } from './blob-key';

describe('blob keys', () => {
  it.each([
    'content/kbs/0f3a/r/9b1c/f/file/original',
    'a',
    'a/b.c/d_e-f~g=h@i:j+k',
    'reporting/activity/2024-05-01T00:00:00Z.csv',
    `a/${'x'.repeat(200)}`,
  ])('accepts %s', (key) => {
    expect(blobKeyProblem(key)).toBeNull();
    expect(isValidBlobKey(key)).toBe(true);
  });

  it.each([
    ['', 'non-empty'],
    ['../x', '".." segments'],
    ['a/../../x', '".." segments'],
    ['a/./b', '".." segments'],
    ['/abs', 'start with "/"'],
    ['a/', 'end with "/"'],
    ['a//b', 'empty segments'],
    ['a\\b', 'characters outside'],
    ['a\u0000b', 'characters outside'],
    ['a b', 'characters outside'],
    ['a#b', 'characters outside'],
    ['a?b', 'characters outside'],
    ['é', 'characters outside'],
    [`a/${'x'.repeat(201)}`, 'at most 200 bytes'],
    [`${'abcdefgh/'.repeat(114)}x`, 'at most 1024 bytes'],
  ])('rejects %j (%s)', (key, why) => {
    expect(blobKeyProblem(key)).toContain(why);
    expect(() => assertValidBlobKey(key)).toThrow(DomainError);
  });

  it('rejects non-strings', () => {
    expect(isValidBlobKey(undefined)).toBe(false);
    expect(isValidBlobKey(42)).toBe(false);
  });

  it('never echoes control characters in its messages', () => {
    // eslint-disable-next-line no-control-regex -- the test is about control characters
    expect(blobKeyProblem('a\u0007\u001b[2Jb')).not.toMatch(/[\u0000-\u001f]/);
  });

  it('raises VALIDATION_FAILED in the 422 shape', () => {
    try {
      assertValidBlobKey('../x');
      throw new Error('expected a DomainError');
    } catch (err) {
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED', details: { detail: [{ loc: ['blob', 'key'], type: 'value_error' }] } });
    }
  });

  it('checks prefixes for listing and for deletion', () => {
    const list = { allowEmpty: true, requireTrailingSlash: false };
    const del = { allowEmpty: false, requireTrailingSlash: true };
    expect(blobPrefixProblem('', list)).toBeNull();
    expect(blobPrefixProblem('a/b', list)).toBeNull();
    expect(blobPrefixProblem('a/b/', list)).toBeNull();
    expect(blobPrefixProblem('', del)).toContain('empty');
    expect(blobPrefixProblem('a/b', del)).toContain('end with "/"');
    expect(blobPrefixProblem('a/b/', del)).toBeNull();
    expect(blobPrefixProblem('../', del)).toContain('".."');
    expect(blobPrefixProblem('/a/', del)).toContain('start with "/"');
    expect(blobPrefixProblem('a//', del)).toContain('empty segments');
  });

  it('percent-encodes each segment for URLs', () => {
    expect(encodeBlobKeyForUrl('a/b:c/d+e@f=g')).toBe('a/b%3Ac/d%2Be%40f%3Dg');
  });
});
