import { artefactsOf, findArtefact } from './extracted-artefacts';

const prefix = 'content/kbs/kb1/r/r1/f/file/doc/';
const ref = (key: string, extra: Record<string, unknown> = {}) => ({
  uri: `blob:${key}`,
  size: 10,
  content_type: 'image/png',
  filename: 'thumbnail.png',
  md5: 'x',
  ...extra,
});

const extracted = {
  text: { text: 'ignored', split_text: {} },
  metadata: { metadata: { thumbnail: ref(`${prefix}thumbnail`), language: 'en' }, split_metadata: {}, deleted_splits: [] },
  file: {
    file_thumbnail: ref(`${prefix}thumbnail`),
    file_generated: { 'summary.md': ref(`${prefix}generated/summary.md`, { content_type: 'text/markdown', filename: 'summary.md' }) },
    file_pages_previews: { pages: [ref(`${prefix}pages/0`)], positions: [], structures: [] },
    // A reference outside the field's prefix is never served, nor is the original.
    file_preview: ref('content/kbs/kb2/r/r9/f/file/x/thumbnail'),
    icon: 'application/pdf',
  },
  link: { link_image: { uri: 'https://example.com/i.png', size: 0 } },
};

describe('extracted artefacts', () => {
  it('lists every stored file reference with its member name', () => {
    expect(
      artefactsOf(extracted)
        .map((a) => a.name)
        .sort(),
    ).toEqual(['file_generated/summary.md', 'file_pages_previews/pages/0', 'file_preview', 'file_thumbnail', 'thumbnail']);
  });

  it.each([
    ['thumbnail', `${prefix}thumbnail`],
    ['file_thumbnail', `${prefix}thumbnail`],
    ['/thumbnail', `${prefix}thumbnail`],
    ['generated/summary.md', `${prefix}generated/summary.md`],
    ['file_generated/summary.md', `${prefix}generated/summary.md`],
    ['file_pages_previews/pages/0', `${prefix}pages/0`],
    ['pages/0', `${prefix}pages/0`],
    ['file_preview', undefined],
    ['original', undefined],
    ['extracted/3.json', undefined],
    ['../thumbnail', undefined],
    ['link_image', undefined],
    ['', undefined],
  ])('%s → %s', (name, key) => {
    expect(findArtefact(extracted, prefix, name)?.key).toBe(key);
  });

  it('keeps the reference’s file name and type for the response', () => {
    expect(findArtefact(extracted, prefix, 'file_generated/summary.md')).toMatchObject({
      filename: 'summary.md',
      content_type: 'text/markdown',
    });
    expect(findArtefact(null, prefix, 'thumbnail')).toBeUndefined();
  });
});
