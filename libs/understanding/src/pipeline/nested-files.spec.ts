import { ExtractionError, type ExtractedDocument, type NestedFile } from './extractors';
import { appendNested } from './nested-files';

const doc = (text: string, nested: NestedFile[] = []): ExtractedDocument => ({
  text,
  paragraphs: [{ start: 0, end: text.length, kind: 'TEXT' }],
  ...(nested.length ? { nested } : {}),
});
const file = (filename: string): NestedFile => ({ filename, content_type: 'text/plain', data: Buffer.from(filename) });

describe('appendNested', () => {
  it('appends readable attachments after the body and skips unreadable ones', async () => {
    const mail = doc('Body', [file('a.txt'), file('bomb.docx'), file('c.txt')]);
    const merged = await appendNested(mail, async (f) => {
      if (f.filename === 'bomb.docx') throw new ExtractionError('decompression bomb', 'TOO_LARGE');
      return doc(`text of ${f.filename}`);
    });
    expect(merged.document.text).toBe('Body\n\ntext of a.txt\n\ntext of c.txt');
    expect(Object.keys(merged.nestedPositions)).toEqual(['a.txt', 'c.txt']);
  });

  it('stops opening attachments once their time budget is spent', async () => {
    let clock = 0;
    const mail = doc('Body', [file('1.txt'), file('2.txt'), file('3.txt'), file('4.txt')]);
    const opened: string[] = [];
    const merged = await appendNested(
      mail,
      async (f) => {
        opened.push(f.filename);
        clock += 60; // each attachment takes 60 "ms" of the fake clock
        return doc(f.filename);
      },
      { budgetMs: 100, now: () => clock },
    );
    expect(opened).toEqual(['1.txt', '2.txt']);
    expect(Object.keys(merged.nestedPositions)).toEqual(['1.txt', '2.txt']);
  });
});
