import ExcelJS from 'exceljs';
import { detectFileType, MimeTypes } from './detect-file-type';
import { extractFile } from './extract-file';
import { ExtractionError } from './extraction.error';
import { buildDocx, buildPptx, paragraphTexts } from './fixtures.testing';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`),
  );

describe('Office documents', () => {
  it('DOCX: headings become TITLE paragraphs, table rows TABLE paragraphs', async () => {
    const docx = await buildDocx([
      { heading: 'Quarterly report' },
      { text: 'Revenue grew by 12 %.' },
      {
        table: [
          ['Region', 'Sales'],
          ['North', '10'],
        ],
      },
      { text: 'Costs & risks' },
    ]);
    expect(detectFileType(docx)).toBe(MimeTypes.docx);
    const doc = await extractFile(docx, { filename: 'r.bin' });
    expect(paragraphTexts(doc)).toEqual(['Quarterly report', 'Revenue grew by 12 %.', 'Region | Sales', 'North | 10', 'Costs & risks']);
    expect(doc.paragraphs.map((p) => p.kind)).toEqual(['TITLE', 'TEXT', 'TABLE', 'TABLE', 'TEXT']);
    expect(doc.title).toBe('Quarterly report');
  });

  it('PPTX: slide text then its speaker notes, with the slide number as page', async () => {
    const pptx = await buildPptx(
      [{ text: ['Welcome', 'Agenda for today'], notes: 'Remember to greet the audience' }, { text: ['Second slide'] }],
      'Kick-off',
    );
    expect(detectFileType(pptx)).toBe(MimeTypes.pptx);
    const doc = await extractFile(pptx);
    expect(paragraphTexts(doc)).toEqual(['Welcome', 'Agenda for today', 'Remember to greet the audience', 'Second slide']);
    expect(doc.paragraphs.map((p) => p.page)).toEqual([1, 1, 1, 2]);
    expect(doc.pages).toBe(2);
    expect(doc.title).toBe('Kick-off');
    expect(doc.metadata?.['author']).toBe('Ada');
  });

  it('XLSX: one TABLE paragraph per row, sheet titles, rows_previews capped at 20', async () => {
    const wb = new ExcelJS.Workbook();
    const people = wb.addWorksheet('People');
    people.addRow(['Name', 'Age']);
    people.addRow(['Ann', 31]);
    people.addRow([]);
    people.addRow(['Bob', 42]);
    const big = wb.addWorksheet('Numbers');
    for (let i = 1; i <= 30; i++) big.addRow([i, i * i]);
    const xlsx = Buffer.from(await wb.xlsx.writeBuffer());
    expect(detectFileType(xlsx)).toBe(MimeTypes.xlsx);
    const doc = await extractFile(xlsx);
    const texts = paragraphTexts(doc);
    expect(texts.slice(0, 5)).toEqual(['People', 'Name | Age', 'Ann | 31', 'Bob | 42', 'Numbers']);
    expect(texts).toHaveLength(5 + 30);
    expect(doc.paragraphs[1]).toMatchObject({ kind: 'TABLE', is_a_table: true });
    expect(doc.paragraphs[0]).toMatchObject({ kind: 'TITLE' });
    expect(doc.rows_previews?.['People']?.rows).toEqual([{ cell: ['Name', 'Age'] }, { cell: ['Ann', '31'] }, { cell: ['Bob', '42'] }]);
    expect(doc.rows_previews?.['Numbers']?.rows).toHaveLength(20);
    expect(doc.metadata?.['sheets']).toBe('People, Numbers');
  });

  it('CSV: RFC 4180 quoting (delimiters, quotes and line breaks inside quotes), semicolons detected', async () => {
    const csv = Buffer.from('name,comment\r\n"Smith, Ann","said ""hi""\nthen left"\r\nBob,plain\r\n\r\n');
    const doc = await extractFile(csv, { contentType: 'text/csv' });
    expect(paragraphTexts(doc)).toEqual(['name | comment', 'Smith, Ann | said "hi" then left', 'Bob | plain']);
    expect(doc.rows_previews?.['csv']?.rows[1]).toEqual({ cell: ['Smith, Ann', 'said "hi" then left'] });
    const semi = await extractFile(Buffer.from('a;b;c\n1;2,5;3\n'), { filename: 'x.csv' });
    expect(paragraphTexts(semi)).toEqual(['a | b | c', '1 | 2,5 | 3']);
  });

  it('truncated Office files are CORRUPT_FILE; legacy and encrypted Office files are refused clearly', async () => {
    const docx = await buildDocx([{ text: 'Hello' }]);
    await expect(codeOf(extractFile(docx.subarray(0, docx.length - 40), { filename: 'a.docx' }))).resolves.toBe('CORRUPT_FILE');
    await expect(codeOf(extractFile(docx.subarray(0, 200), { contentType: MimeTypes.xlsx }))).resolves.toBe('CORRUPT_FILE');
    const cfb = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(600)]);
    await expect(codeOf(extractFile(cfb, { filename: 'old.doc' }))).resolves.toBe('UNSUPPORTED_TYPE');
    const encrypted = Buffer.concat([cfb, Buffer.from('EncryptedPackage', 'utf16le')]);
    await expect(codeOf(extractFile(encrypted, { filename: 'secret.docx' }))).resolves.toBe('PASSWORD_REQUIRED');
  });
});
