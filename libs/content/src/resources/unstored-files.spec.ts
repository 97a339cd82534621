import { DomainError, fileBlobKey, unstoredFileKey } from '@kb/contracts';
import type { FieldEntity } from '../entities/field.entity';
import type { FieldWrite } from './field-values';
import { isReleased, prepareFileWrites, releaseUnstored, supersededUnstored } from './unstored-files';

const owner = { kbid: 'kb1', id: 'r1' };
const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';
const unstored = (upload: string, field = 'doc') => `blob:${unstoredFileKey('kb1', 'r1', field, upload)}`;
const fileWrite = (uri: string, fieldId = 'doc'): FieldWrite => ({
  fieldType: 'file',
  fieldId,
  value: { file: { uri, filename: 'a.txt', md5: 'm' } },
});
const row = (value: Record<string, unknown>, fieldId = 'doc'): FieldEntity => ({
  rid: 'r1',
  kbid: 'kb1',
  fieldType: 'file',
  fieldId,
  value,
  extracted: null,
  status: 'PENDING',
  error: null,
  errors: [],
  seqid: 1,
  modifiedAt: new Date(0),
});

describe('unstored files (x-skip-store)', () => {
  describe('prepareFileWrites', () => {
    it.each([
      ['with x-skip-store, the field’s unstored file', unstored(U1), true, true],
      ['without x-skip-store', unstored(U1), false, false],
      ['with x-skip-store, a kept original (the edge did not isolate it)', `blob:${fileBlobKey('kb1', 'r1', 'doc')}`, true, false],
      ['with x-skip-store, another field’s unstored file', unstored(U1, 'other'), true, false],
      ['with x-skip-store, an external address', 'https://example.com/a.pdf', true, false],
    ])('%s → marked %s', (_what, uri, skip, marked) => {
      const [w] = prepareFileWrites(owner, [fileWrite(uri as string)], skip as boolean);
      expect(w?.value['skip_store'] === true).toBe(marked);
    });

    it('refuses blob addresses of another resource or KB, in files and message attachments, listing every one', () => {
      const writes: FieldWrite[] = [
        fileWrite('blob:content/kbs/kb2/r/r9/f/file/x/original', 'a'),
        fileWrite(`blob:${fileBlobKey('kb1', 'r2', 'x')}`, 'b'),
        fileWrite(`blob:${fileBlobKey('kb1', 'r1', 'c')}`, 'c'),
        {
          fieldType: 'conversation',
          fieldId: 'chat',
          value: {
            messages: [
              { ident: 'm1', content: { text: 'hi', attachments: [{ uri: 'https://x.test/a' }, { uri: 'blob:content/kbs/kb2/secret' }] } },
            ],
          },
        },
      ];
      let issues: unknown;
      try {
        prepareFileWrites(owner, writes, false);
      } catch (err) {
        issues = (err as DomainError).details?.['detail'];
      }
      expect(issues).toEqual([
        expect.objectContaining({ loc: ['body', 'files', 'a', 'file', 'uri'] }),
        expect.objectContaining({ loc: ['body', 'files', 'b', 'file', 'uri'] }),
        expect.objectContaining({ loc: ['body', 'conversations', 'chat', 'messages', 0, 'content', 'attachments', 1, 'uri'] }),
      ]);
    });
  });

  describe('releaseUnstored', () => {
    it('drops the address and deletes the file’s own directory', () => {
      const released = releaseUnstored(row({ skip_store: true, file: { uri: unstored(U1), filename: 'a.txt', md5: 'm' }, language: 'en' }));
      expect(released).toEqual({
        value: { skip_store: true, file: { filename: 'a.txt', md5: 'm' }, language: 'en' },
        cleanup: { kind: 'blob_cleanup', target: `content/kbs/kb1/r/r1/f/file/doc/unstored/${U1}/` },
      });
      expect(isReleased(row(released!.value))).toBe(true);
    });

    it.each([
      ['a kept file', { file: { uri: `blob:${fileBlobKey('kb1', 'r1', 'doc')}` } }],
      ['a marked value naming a kept file', { skip_store: true, file: { uri: `blob:${fileBlobKey('kb1', 'r1', 'doc')}` } }],
      ['an already released file', { skip_store: true, file: { filename: 'a.txt' } }],
      ['an unmarked unstored key', { file: { uri: unstored(U1) } }],
    ])('leaves %s alone', (_what, value) => {
      expect(releaseUnstored(row(value))).toBeUndefined();
    });
  });

  describe('supersededUnstored', () => {
    const pending = row({ skip_store: true, file: { uri: unstored(U1) } });
    it.each([
      [
        'a new upload replaces a pending unstored file',
        [row({ skip_store: true, file: { uri: unstored(U2) } })],
        [`content/kbs/kb1/r/r1/f/file/doc/unstored/${U1}/`],
      ],
      [
        'an external address replaces it',
        [row({ file: { uri: 'https://example.com/a.pdf' } })],
        [`content/kbs/kb1/r/r1/f/file/doc/unstored/${U1}/`],
      ],
      ['reprocessing keeps the same value', [pending], []],
      ['another field is written', [row({ file: { uri: unstored(U2, 'other') } }, 'other')], []],
    ])('%s', (_what, next, targets) => {
      expect(supersededUnstored([pending], next).map((e) => e.target)).toEqual(targets);
    });
  });
});
