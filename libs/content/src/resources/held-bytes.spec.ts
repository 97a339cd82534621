import {
  byteMap,
  heldBytes,
  keepMeasuredSizes,
  supersededFiles,
  withImportedBlobs,
  withPushedAttachments,
  writtenBytes,
} from './held-bytes';

const kbid = 'kb';
const rid = 'r';
const own = (type: string, id: string, rest: string) => `content/kbs/${kbid}/r/${rid}/f/${type}/${id}/${rest}`;
const file = (fieldId: string, uri: string | undefined, size: unknown, extra: Record<string, unknown> = {}) => ({
  kbid,
  rid,
  fieldType: 'file' as const,
  fieldId,
  value: { file: { ...(uri ? { uri } : {}), ...(size !== undefined ? { size } : {}) } } as Record<string, unknown>,
  ...extra,
});
const chat = (attachments: Record<string, number>) => ({
  kbid,
  rid,
  fieldType: 'conversation' as const,
  fieldId: 'chat',
  value: {},
  attachments,
});

describe('held bytes', () => {
  it('byteMap keeps whole byte counts under the prefix, at most as many as asked', () => {
    expect(byteMap({ 'p/a': 1, 'p/b': -1, 'p/c': 1.5, 'p/d': '3', 'q/e': 4, 'p/../x': 5 }, 'p/')).toEqual({ 'p/a': 1 });
    expect(byteMap(null)).toEqual({});
    expect(byteMap([1, 2])).toEqual({});
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p/${i}`, i]));
    expect(Object.keys(byteMap(many, 'p/', 64))).toHaveLength(64);
    expect(Object.keys(byteMap(many, 'p/'))).toHaveLength(100);
  });

  it("counts each field's own stored file, artefacts and attachments", () => {
    const fields = [
      file('a', `blob:${own('file', 'a', 'original')}`, 100, {
        artefacts: { [own('file', 'a', 'extracted/1.json')]: 10, [own('file', 'a', 'thumbnail')]: 5 },
      }),
      // An external URL, a released unstored file and a made-up size hold nothing.
      file('b', 'https://example.com/b.pdf', 50),
      file('c', undefined, 70),
      file('d', `blob:${own('file', 'd', 'original')}`, -3),
      // Another field's blob is that field's: deleting this one does not delete it.
      file('e', `blob:${own('file', 'a', 'original')}`, 100),
      // An artefact outside the field's prefix is not the field's.
      file('f', undefined, undefined, { artefacts: { [own('file', 'a', 'thumbnail')]: 999 } }),
      chat({ [own('conversation', 'chat', 'attachments/1')]: 7, [own('conversation', 'chat', 'attachments/2')]: 8 }),
    ];
    expect(heldBytes(fields)).toBe(100 + 10 + 5 + 7 + 8);
  });

  it('a write replaces the file and keeps what processing and pushes stored', () => {
    const a = `blob:${own('file', 'a', 'original')}`;
    const previous = [
      file('a', a, 100, { artefacts: { [own('file', 'a', 'extracted/1.json')]: 10 } }),
      file('b', `blob:${own('file', 'b', 'original')}`, 20),
    ];
    // The file of `a` replaced by a bigger one: +50; its artefacts stay until its next result.
    expect(writtenBytes(previous, [file('a', a, 150)])).toBe(50);
    // `a` now points to an external URL: its file no longer counts (and is deleted), the artefacts still do.
    expect(writtenBytes(previous, [file('a', 'https://x/a', undefined)])).toBe(-100);
    expect(supersededFiles(previous, [file('a', 'https://x/a', undefined)])).toEqual([
      { kind: 'blob_cleanup', target: own('file', 'a', 'original') },
    ]);
    expect(supersededFiles(previous, [file('a', a, 150)])).toEqual([]);
    // A new field.
    expect(writtenBytes(previous, [file('c', `blob:${own('file', 'c', 'original')}`, 30)])).toBe(30);
  });

  it('a write repeating the stored uri without a measured size keeps the size measured before', () => {
    const a = `blob:${own('file', 'a', 'original')}`;
    const previous = [file('a', a, 100)];
    const rows = keepMeasuredSizes(previous, [file('a', a, undefined)]);
    expect((rows[0]?.value['file'] as Record<string, unknown>)['size']).toBe(100);
    expect(writtenBytes(previous, rows)).toBe(0);
  });

  it('pushed attachments are added to the field and every written row carries the member', () => {
    const previous = [chat({ [own('conversation', 'chat', 'attachments/1')]: 7 })];
    const rows = withPushedAttachments(
      [
        { kbid, rid, fieldType: 'conversation' as const, fieldId: 'chat', value: {} },
        { kbid, rid, fieldType: 'text' as const, fieldId: 't', value: {} },
      ],
      previous,
      { chat: { [own('conversation', 'chat', 'attachments/2')]: 8 } },
    );
    expect(rows.map((r) => r.attachments)).toEqual([
      { [own('conversation', 'chat', 'attachments/1')]: 7, [own('conversation', 'chat', 'attachments/2')]: 8 },
      {},
    ]);
    expect(writtenBytes(previous, rows)).toBe(8);
    expect(withPushedAttachments(rows, previous, undefined)).toBe(rows);
  });

  it('an import records what it stored under the field holding it; a size the archive claims is never taken', () => {
    const stored = {
      [own('file', 'a', 'original')]: 100,
      [own('file', 'a', 'thumbnail')]: 5,
      [own('conversation', 'chat', 'attachments/t1')]: 7,
      [own('conversation', 'chat', 'thumbnail')]: 3,
      [`content/kbs/${kbid}/r/${rid}/stray`]: 9,
      [own('file', 'gone', 'original')]: 11,
    };
    const { rows, strays } = withImportedBlobs(
      [
        file('a', `blob:${own('file', 'a', 'original')}`, 999_999),
        // Its file is not in the archive: nothing is stored, whatever the archive says.
        file('b', `blob:${own('file', 'b', 'original')}`, 50),
        file('c', 'https://example.com/c.pdf', 60),
        chat({ [own('conversation', 'chat', 'attachments/forged')]: 1000 }),
      ],
      stored,
    );
    expect(rows.map((r) => ((r.value as Record<string, unknown>)['file'] as { size?: number } | undefined)?.size)).toEqual([
      100,
      undefined,
      60,
      undefined,
    ]);
    expect(rows.map((r) => [r.artefacts, r.attachments])).toEqual([
      [{ [own('file', 'a', 'thumbnail')]: 5 }, {}],
      [{}, {}],
      [{}, {}],
      [{ [own('conversation', 'chat', 'thumbnail')]: 3 }, { [own('conversation', 'chat', 'attachments/t1')]: 7 }],
    ]);
    expect(strays.sort()).toEqual([`content/kbs/${kbid}/r/${rid}/stray`, own('file', 'gone', 'original')].sort());
    expect(heldBytes(rows)).toBe(100 + 5 + 7 + 3);
  });
});
