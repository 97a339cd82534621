import ExcelJS from 'exceljs';
import { DocumentBuilder } from './document-builder';
import { asCorrupt } from './extraction.error';
import type { ExtractedDocument, RowsPreview } from './extraction.types';
import { parseCsv } from './csv';
import { decodeText } from './text.extractor';

/** Rows kept per sheet in `rows_previews`. */
export const PREVIEW_ROWS = 20;
const CELL_SEPARATOR = ' | ';

/**
 * Each non-empty row becomes one TABLE paragraph (cells joined with ' | '); each sheet starts
 * with its name as a TITLE paragraph when the workbook has more than one sheet.
 */
export async function extractXlsx(data: Buffer): Promise<ExtractedDocument> {
  const workbook = new ExcelJS.Workbook();
  // exceljs' Buffer type predates Node's generic Buffer<ArrayBufferLike>.
  await asCorrupt('Spreadsheet', () => workbook.xlsx.load(data as unknown as ExcelJS.Buffer));
  const builder = new DocumentBuilder();
  const previews: Record<string, RowsPreview> = {};
  const several = workbook.worksheets.length > 1;
  for (const sheet of workbook.worksheets) {
    if (several) builder.add(sheet.name, 'TITLE');
    const preview: RowsPreview = { rows: [] };
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      // row.values is 1-based with a hole at 0; cellCount covers the used columns.
      for (let c = 1; c <= row.cellCount; c++) cells.push(cellText(row.getCell(c)));
      while (cells.length && cells[cells.length - 1] === '') cells.pop();
      if (!cells.length) return;
      builder.add(cells.join(CELL_SEPARATOR), 'TABLE', { is_a_table: true });
      if (preview.rows.length < PREVIEW_ROWS) preview.rows.push({ cell: cells });
    });
    previews[sheet.name] = preview;
  }
  const metadata: Record<string, string> = { sheets: workbook.worksheets.map((s) => s.name).join(', ') };
  if (workbook.creator) metadata['author'] = workbook.creator;
  if (workbook.title) metadata['title'] = workbook.title;
  if (workbook.subject) metadata['subject'] = workbook.subject;
  return builder.build({ rows_previews: previews, metadata, ...(workbook.title ? { title: workbook.title } : {}) });
}

function cellText(cell: ExcelJS.Cell): string {
  try {
    // `text` renders rich text, hyperlinks, dates and formula results the way the sheet shows them.
    return cell.text.replace(/\s+/g, ' ').trim();
  } catch {
    return String(cell.value ?? '').trim();
  }
}

/** CSV or TSV: one TABLE paragraph per row, the preview under the sheet name "csv". */
export function extractCsv(data: Buffer): ExtractedDocument {
  const rows = parseCsv(decodeText(data));
  const builder = new DocumentBuilder();
  const preview: RowsPreview = { rows: [] };
  for (const raw of rows) {
    const cells = raw.map((c) => c.replace(/\s+/g, ' ').trim());
    if (cells.every((c) => c === '')) continue;
    builder.add(cells.join(CELL_SEPARATOR), 'TABLE', { is_a_table: true });
    if (preview.rows.length < PREVIEW_ROWS) preview.rows.push({ cell: cells });
  }
  return builder.build({ rows_previews: { csv: preview } });
}
