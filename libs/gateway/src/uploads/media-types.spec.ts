import { decodeFilename, resolveContentType } from './media-types';

describe('upload helpers', () => {
  it.each([
    [undefined, 'report.pdf', 'application/pdf'],
    ['application/octet-stream', 'notes.md', 'text/markdown'],
    ['application/pdf; charset=binary', undefined, 'application/pdf'],
    ['text/plain', 'x.bin', 'text/plain'],
    ['video/mp4', undefined, 'video/mp4'],
    ['application/x-msdownload', 'virus.exe', undefined],
    [undefined, 'archive.zip', undefined],
    [undefined, undefined, 'application/octet-stream'],
  ])('content type of (%s, %s) → %s', (declared, name, expected) => {
    expect(resolveContentType(declared, name)).toBe(expected);
  });

  it.each([
    ['plain name.pdf', 'plain name.pdf'],
    ['caf%C3%A9%20menu.pdf', 'café menu.pdf'],
    [Buffer.from('informe año.docx').toString('base64'), 'informe año.docx'],
    ['../../etc/passwd', '.._.._etc_passwd'],
    ['abcdefgh', 'abcdefgh'],
  ])('filename %s → %s', (raw, expected) => {
    expect(decodeFilename(raw)).toBe(expected);
  });
});
