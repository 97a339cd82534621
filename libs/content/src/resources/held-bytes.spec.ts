import { byteMap, heldBytes, withPushedAttachments, writtenBytes } from './held-bytes';

const file = (fieldId: string, uri: string | undefined, size: unknown, extra: Record<string, unknown> = {}) => ({
  fieldType: 'file' as const,
  fieldId,
  value: { file: { ...(uri ? { uri } : {}), size } },
  ...extra,
});

describe('held bytes', () => {
  it('byteMap keeps whole byte counts under the prefix, at most 64', () => {
    expect(byteMap({ 'p/a': 1, 'p/b': -1, 'p/c': 1.5, 'p/d': '3', 'q/e': 4, 'p/../x': 5 }, 'p/')).toEqual({ 'p/a': 1 });
    expect(byteMap(null)).toEqual({});
    expect(byteMap([1, 2])).toEqual({});
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p/${i}`, i]));
    expect(Object.keys(byteMap(many, 'p/'))).toHaveLength(64);
  });

  it('counts stored files, artefacts and attachments, each key once', () => {
    const fields = [
      file('a', 'blob:k/a', 100, { artefacts: { 'k/a/x.json': 10, 'k/a/thumb': 5 } }),
      // An external URL, a released unstored file and a made-up size hold nothing.
      file('b', 'https://example.com/b.pdf', 50),
      file('c', undefined, 70),
      file('d', 'blob:k/d', -3),
      // A second field naming the same blob does not count it again.
      file('e', 'blob:k/a', 100),
      { fieldType: 'conversation' as const, fieldId: 'chat', value: {}, attachments: { 'k/chat/1': 7, 'k/chat/2': 8 } },
    ];
    expect(heldBytes(fields)).toBe(100 + 10 + 5 + 7 + 8);
  });

  it('a write replaces the file and keeps what processing and pushes stored', () => {
    const previous = [file('a', 'blob:k/a', 100, { artefacts: { 'k/a/x.json': 10 } }), file('b', 'blob:k/b', 20)];
    // The file of `a` replaced by a bigger one: +50; its artefacts stay until its next result.
    expect(writtenBytes(previous, [file('a', 'blob:k/a', 150)])).toBe(50);
    // `a` now points to an external URL: its file no longer counts, the artefacts still do.
    expect(writtenBytes(previous, [file('a', 'https://x/a', 0)])).toBe(-100);
    // A new field.
    expect(writtenBytes(previous, [file('c', 'blob:k/c', 30)])).toBe(30);
  });

  it('pushed attachments are added to the field and every written row carries the member', () => {
    const previous = [{ fieldType: 'conversation' as const, fieldId: 'chat', value: {}, attachments: { 'k/chat/1': 7 } }];
    const rows = withPushedAttachments(
      [
        { fieldType: 'conversation' as const, fieldId: 'chat', value: {} },
        { fieldType: 'text' as const, fieldId: 't', value: {} },
      ],
      previous,
      { chat: { 'k/chat/2': 8 } },
    );
    expect(rows.map((r) => r.attachments)).toEqual([{ 'k/chat/1': 7, 'k/chat/2': 8 }, {}]);
    expect(writtenBytes(previous, rows)).toBe(8);
    expect(withPushedAttachments(rows, previous, undefined)).toBe(rows);
  });
});
