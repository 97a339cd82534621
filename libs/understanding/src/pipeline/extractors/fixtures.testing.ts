/**
 * Fixture builders for the extractor specs: every file is generated here, none is downloaded.
 * PDFs come from `@kb/platform/testing` (the benchmarks build them too).
 */
import JSZip from 'jszip';
import sharp from 'sharp';

export { buildPdf, type PdfPage } from '@kb/platform/testing';

/** A white image with black text lines, rendered from SVG by sharp (librsvg + the system's fonts). */
export async function textImage(lines: string[], format: 'png' | 'jpeg' | 'webp' | 'tiff' = 'png', width = 900): Promise<Buffer> {
  const height = 60 + lines.length * 60;
  const text = lines
    .map((l, i) => `<text x="30" y="${70 + i * 60}" font-family="DejaVu Sans, sans-serif" font-size="40" fill="#000">${l}</text>`)
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).flatten({ background: '#ffffff' }).toFormat(format).toBuffer();
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A DOCX with "Heading 1" paragraphs (styled via styles.xml, as Word writes them), body paragraphs and a table. */
export async function buildDocx(blocks: ({ heading: string } | { text: string } | { table: string[][] })[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
  );
  zip.file(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
  );
  zip.file(
    'word/_rels/document.xml.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
  );
  zip.file(
    'word/styles.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
  );
  const para = (t: string, style?: string): string =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${esc(t)}</w:t></w:r></w:p>`;
  const body = blocks
    .map((b) =>
      'heading' in b
        ? para(b.heading, 'Heading1')
        : 'text' in b
          ? para(b.text)
          : `<w:tbl>${b.table.map((r) => `<w:tr>${r.map((c) => `<w:tc>${para(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`,
    )
    .join('');
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer' });
}

const PNS =
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const shapeTree = (paragraphs: string[]): string =>
  `<p:cSld><p:spTree><p:sp><p:txBody>${paragraphs.map((t) => `<a:p><a:r><a:t>${esc(t)}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp></p:spTree></p:cSld>`;

/** A PPTX with one text box per slide and optional speaker notes. */
export async function buildPptx(slides: { text: string[]; notes?: string }[], title?: string): Promise<Buffer> {
  const zip = new JSZip();
  const overrides = slides
    .map(
      (_, i) =>
        `<Override PartName="/ppt/slides/slide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`,
    )
    .join('');
  zip.file(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>${overrides}</Types>`,
  );
  zip.file('ppt/presentation.xml', `<?xml version="1.0" encoding="UTF-8"?><p:presentation ${PNS}/>`);
  if (title)
    zip.file(
      'docProps/core.xml',
      `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${esc(title)}</dc:title><dc:creator>Ada</dc:creator></cp:coreProperties>`,
    );
  slides.forEach((s, i) => {
    zip.file(`ppt/slides/slide${i + 1}.xml`, `<?xml version="1.0" encoding="UTF-8"?><p:sld ${PNS}>${shapeTree(s.text)}</p:sld>`);
    if (s.notes)
      zip.file(
        `ppt/notesSlides/notesSlide${i + 1}.xml`,
        `<?xml version="1.0" encoding="UTF-8"?><p:notes ${PNS}>${shapeTree([s.notes])}</p:notes>`,
      );
  });
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** Asserts nothing; returns each paragraph's text so specs can compare against expectations. */
export function paragraphTexts(doc: { text: string; paragraphs: { start: number; end: number }[] }): string[] {
  return doc.paragraphs.map((p) => doc.text.slice(p.start, p.end));
}
