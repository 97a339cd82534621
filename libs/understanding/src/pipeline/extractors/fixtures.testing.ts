/**
 * Fixture builders for the extractor specs: every file is generated here, none is downloaded.
 * PDFs are written by hand (objects, xref, trailer) so the tests control text layers, image-only
 * pages and the Standard security handler (RC4 40-bit, revision 2) byte for byte.
 */
import { createHash } from 'node:crypto';
import JSZip from 'jszip';
import sharp from 'sharp';

export type PdfPage = { lines: string[] } | { jpeg: Buffer; width: number; height: number };

const PAD = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
  }
  return out;
}

const md5 = (...parts: Buffer[]): Buffer => createHash('md5').update(Buffer.concat(parts)).digest();
const pad = (password: string): Buffer => Buffer.concat([Buffer.from(password, 'latin1'), PAD]).subarray(0, 32);

/** Builds a PDF; with `userPassword` it is encrypted (RC4-40, R2) and opens only with that password. */
export function buildPdf(pages: PdfPage[], options: { userPassword?: string; title?: string } = {}): Buffer {
  const objects: (string | Buffer)[] = [];
  const add = (o: string | Buffer): number => objects.push(o);
  const id = createHash('md5').update('fixture').digest();
  let objectKey: ((n: number) => Buffer) | undefined;
  let encryptRef: number | undefined;
  if (options.userPassword !== undefined) {
    const P = -44;
    const o = rc4(md5(pad('owner-secret')).subarray(0, 5), pad(options.userPassword));
    const p = Buffer.alloc(4);
    p.writeInt32LE(P);
    const key = md5(pad(options.userPassword), o, p, id).subarray(0, 5);
    const u = rc4(key, PAD);
    objectKey = (n) => md5(key, Buffer.from([n & 255, (n >> 8) & 255, (n >> 16) & 255, 0, 0])).subarray(0, 10);
    encryptRef = add(`<< /Filter /Standard /V 1 /R 2 /O <${o.toString('hex')}> /U <${u.toString('hex')}> /P ${P} >>`);
  }
  const stream = (dict: string, body: Buffer): number => {
    const n = objects.length + 1;
    const data = objectKey ? rc4(objectKey(n), body) : body;
    return add(Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]));
  };
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pagesRef = objects.length + 1 + 1; // after the catalog
  const catalog = add(`<< /Type /Catalog /Pages ${pagesRef} 0 R >>`);
  add('PAGES');
  const kids: number[] = [];
  for (const page of pages) {
    if ('lines' in page) {
      const ops = page.lines.map((l, i) => (l === '' ? '' : `BT /F1 14 Tf 72 ${720 - i * 20} Td (${l.replace(/[()\\]/g, '\\$&')}) Tj ET`)).join('\n');
      const content = stream('', Buffer.from(ops, 'latin1'));
      kids.push(add(`<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`));
    } else {
      const img = stream(`/Type /XObject /Subtype /Image /Width ${page.width} /Height ${page.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode`, page.jpeg);
      const content = stream('', Buffer.from(`q ${page.width} 0 0 ${page.height} 0 0 cm /Im1 Do Q`, 'latin1'));
      kids.push(add(`<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 ${page.width} ${page.height}] /Resources << /XObject << /Im1 ${img} 0 R >> >> /Contents ${content} 0 R >>`));
    }
  }
  const infoRef = options.title && !objectKey ? add(`<< /Title (${options.title}) /Author (Ada Lovelace) >>`) : 0;
  objects[pagesRef - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0].length;
  objects.forEach((o, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), typeof o === 'string' ? Buffer.from(o, 'latin1') : o, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  const encrypt = encryptRef ? ` /Encrypt ${encryptRef} 0 R` : '';
  // Document information strings would need encrypting too, so encrypted fixtures carry none.
  const info = options.title && !objectKey ? ` /Info ${infoRef} 0 R` : '';
  const trailer = `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${encrypt}${info} /ID [<${id.toString('hex')}> <${id.toString('hex')}>] >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(xref + trailer, 'latin1'));
  return Buffer.concat(parts);
}

/** A white image with black text lines, rendered from SVG by sharp (librsvg + the system's fonts). */
export async function textImage(lines: string[], format: 'png' | 'jpeg' | 'webp' | 'tiff' = 'png', width = 900): Promise<Buffer> {
  const height = 60 + lines.length * 60;
  const text = lines.map((l, i) => `<text x="30" y="${70 + i * 60}" font-family="DejaVu Sans, sans-serif" font-size="40" fill="#000">${l}</text>`).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).flatten({ background: '#ffffff' }).toFormat(format).toBuffer();
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A DOCX with "Heading 1" paragraphs (styled via styles.xml, as Word writes them), body paragraphs and a table. */
export async function buildDocx(blocks: ({ heading: string } | { text: string } | { table: string[][] })[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`);
  zip.file('_rels/.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`);
  zip.file('word/_rels/document.xml.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`);
  zip.file('word/styles.xml', `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`);
  const para = (t: string, style?: string): string => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${esc(t)}</w:t></w:r></w:p>`;
  const body = blocks
    .map((b) => ('heading' in b ? para(b.heading, 'Heading1') : 'text' in b ? para(b.text) : `<w:tbl>${b.table.map((r) => `<w:tr>${r.map((c) => `<w:tc>${para(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`))
    .join('');
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer' });
}

const PNS = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const shapeTree = (paragraphs: string[]): string =>
  `<p:cSld><p:spTree><p:sp><p:txBody>${paragraphs.map((t) => `<a:p><a:r><a:t>${esc(t)}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp></p:spTree></p:cSld>`;

/** A PPTX with one text box per slide and optional speaker notes. */
export async function buildPptx(slides: { text: string[]; notes?: string }[], title?: string): Promise<Buffer> {
  const zip = new JSZip();
  const overrides = slides.map((_, i) => `<Override PartName="/ppt/slides/slide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`).join('');
  zip.file('[Content_Types].xml', `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>${overrides}</Types>`);
  zip.file('ppt/presentation.xml', `<?xml version="1.0" encoding="UTF-8"?><p:presentation ${PNS}/>`);
  if (title) zip.file('docProps/core.xml', `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${esc(title)}</dc:title><dc:creator>Ada</dc:creator></cp:coreProperties>`);
  slides.forEach((s, i) => {
    zip.file(`ppt/slides/slide${i + 1}.xml`, `<?xml version="1.0" encoding="UTF-8"?><p:sld ${PNS}>${shapeTree(s.text)}</p:sld>`);
    if (s.notes) zip.file(`ppt/notesSlides/notesSlide${i + 1}.xml`, `<?xml version="1.0" encoding="UTF-8"?><p:notes ${PNS}>${shapeTree([s.notes])}</p:notes>`);
  });
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** Asserts nothing; returns each paragraph's text so specs can compare against expectations. */
export function paragraphTexts(doc: { text: string; paragraphs: { start: number; end: number }[] }): string[] {
  return doc.paragraphs.map((p) => doc.text.slice(p.start, p.end));
}
