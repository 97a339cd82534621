import { fileBlobKey, unstoredFileDir, unstoredFileKey } from './file-keys';

describe('file keys', () => {
  const ids = { kbid: 'kb1', rid: 'r1', field_id: 'doc' };
  const upload = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';

  it.each([
    [
      'the field’s own unstored file',
      `blob:${unstoredFileKey('kb1', 'r1', 'doc', upload)}`,
      `content/kbs/kb1/r/r1/f/file/doc/unstored/${upload}/`,
    ],
    ['the kept original', `blob:${fileBlobKey('kb1', 'r1', 'doc')}`, undefined],
    ['another field’s unstored file', `blob:${unstoredFileKey('kb1', 'r1', 'other', upload)}`, undefined],
    ['another resource’s unstored file', `blob:${unstoredFileKey('kb1', 'r2', 'doc', upload)}`, undefined],
    ['another KB’s unstored file', `blob:${unstoredFileKey('kb2', 'r1', 'doc', upload)}`, undefined],
    ['a path escaping the directory', `blob:content/kbs/kb1/r/r1/f/file/doc/unstored/../../original`, undefined],
    ['a nested path', `blob:content/kbs/kb1/r/r1/f/file/doc/unstored/${upload}/x/original`, undefined],
    ['an external address', 'https://example.com/a.pdf', undefined],
    ['no address', undefined, undefined],
  ])('%s → %s', (_what, uri, dir) => {
    expect(unstoredFileDir(ids, uri)).toBe(dir);
  });
});
