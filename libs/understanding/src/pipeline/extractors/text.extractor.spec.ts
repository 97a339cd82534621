import { detectFileType, MimeTypes } from './detect-file-type';
import { extractFile } from './extract-file';
import { ExtractionError } from './extraction.error';
import { paragraphTexts } from './fixtures.testing';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`),
  );

describe('detectFileType', () => {
  it.each([
    ['PDF by magic despite a wrong label', Buffer.from('%PDF-1.7\n'), 'text/plain', 'x.txt', MimeTypes.pdf],
    ['PNG', Buffer.from('89504e470d0a1a0a0000', 'hex'), undefined, undefined, MimeTypes.png],
    ['JPEG', Buffer.from('ffd8ffe000104a464946', 'hex'), undefined, undefined, MimeTypes.jpeg],
    ['TIFF', Buffer.from('49492a0008000000', 'hex'), undefined, undefined, MimeTypes.tiff],
    ['WebP', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]), undefined, undefined, MimeTypes.webp],
    ['GIF', Buffer.from('GIF89a....'), undefined, undefined, MimeTypes.gif],
    ['content type when no magic', Buffer.from('a,b\n'), 'text/csv; charset=utf-8', undefined, MimeTypes.csv],
    ['extension when the type is generic', Buffer.from('# T'), 'application/octet-stream', 'notes.md', MimeTypes.markdown],
    ['HTML by content', Buffer.from('  <!DOCTYPE html><html></html>'), undefined, undefined, MimeTypes.html],
    ['JSON by content', Buffer.from('{"a": 1}'), undefined, undefined, MimeTypes.json],
    ['e-mail by headers', Buffer.from('From: a@b.c\r\nSubject: hi\r\n\r\nbody'), undefined, undefined, MimeTypes.eml],
    ['plain text', Buffer.from('just words'), undefined, undefined, MimeTypes.plain],
    ['binary junk', Buffer.from([0, 1, 2, 3, 255, 254]), undefined, undefined, MimeTypes.unknown],
  ])('%s', (_name, data, contentType, filename, expected) => {
    expect(detectFileType(data, contentType, filename)).toBe(expected);
  });
});

describe('text formats', () => {
  it('plain text: blank-line paragraphs with exact offsets, CRLF normalised', async () => {
    const doc = await extractFile(Buffer.from('\uFEFFFirst para\r\nstill first\r\n\r\n\r\n  Second  \n\nThird'), { filename: 'a.txt' });
    expect(paragraphTexts(doc)).toEqual(['First para\nstill first', 'Second', 'Third']);
    expect(doc.paragraphs.every((p) => p.kind === 'TEXT')).toBe(true);
  });

  it('plain text in Windows-1252 is decoded', async () => {
    const doc = await extractFile(Buffer.from([0x63, 0x61, 0x66, 0xe9]), { contentType: 'text/plain' });
    expect(doc.text).toBe('café');
  });

  it('markdown: headings are TITLE, inline markup removed, fenced code kept whole', async () => {
    const md = '# Guide\n\nUse **bold** and [links](http://x.y).\n\n## Setup\n```\nnpm i\n\nnpm test\n```\n- item one\n- item two\n';
    const doc = await extractFile(Buffer.from(md), { filename: 'g.md' });
    expect(paragraphTexts(doc)).toEqual(['Guide', 'Use bold and links.', 'Setup', 'npm i\n\nnpm test', 'item one\nitem two']);
    expect(doc.paragraphs.map((p) => p.kind)).toEqual(['TITLE', 'TEXT', 'TITLE', 'TEXT', 'TEXT']);
    expect(doc.title).toBe('Guide');
  });

  it('JSON: indented, one paragraph per top-level member; invalid JSON is CORRUPT_FILE', async () => {
    const doc = await extractFile(Buffer.from('{"name":"kb","tags":["a","b"]}'), { contentType: 'application/json' });
    expect(doc.text).toBe(JSON.stringify({ name: 'kb', tags: ['a', 'b'] }, null, 2));
    expect(paragraphTexts(doc)).toEqual(['"name": "kb"', '"tags": [\n    "a",\n    "b"\n  ]']);
    await expect(codeOf(extractFile(Buffer.from('{"broken": '), { contentType: 'application/json' }))).resolves.toBe('CORRUPT_FILE');
  });

  it('unknown bytes are UNSUPPORTED_TYPE, oversize files TOO_LARGE, empty files CORRUPT_FILE', async () => {
    await expect(codeOf(extractFile(Buffer.from([0, 159, 146, 150, 0, 1]), {}))).resolves.toBe('UNSUPPORTED_TYPE');
    await expect(codeOf(extractFile(Buffer.from('PK\x05\x06' + '\0'.repeat(18)), { filename: 'a.zip' }))).resolves.toBe('UNSUPPORTED_TYPE');
    await expect(codeOf(extractFile(Buffer.from('hello'), { contentType: 'application/x-shockwave-flash' }))).resolves.toBe(
      'UNSUPPORTED_TYPE',
    );
    // Audio and video are extracted by transcription, which needs a transcriber.
    await expect(codeOf(extractFile(Buffer.from('hello'), { contentType: 'video/mp4' }))).resolves.toBe('NO_TRANSCRIBER');
    await expect(codeOf(extractFile(Buffer.alloc(2048, 'a'), { maxBytes: 1024 }))).resolves.toBe('TOO_LARGE');
    await expect(codeOf(extractFile(Buffer.alloc(0), {}))).resolves.toBe('CORRUPT_FILE');
  });
});
