import { constants, crc32, deflateRawSync } from 'node:zlib';

/**
 * A ZIP entry for `buildZip`. `data` is stored deflated; `deflated` is an already-deflated stream
 * (with its real size and CRC). `declaredSize` overrides the size written in the headers, to build
 * a ZIP whose directory lies about what its entry inflates to.
 */
export type ZipEntry =
  | { name: string; data: Buffer | string; declaredSize?: number }
  | { name: string; deflated: Buffer; size: number; crc: number; declaredSize?: number };

/**
 * A raw deflate stream of `pattern` repeated until `size` bytes, built without holding them: about
 * one mebibyte of repeats is deflated with a sync flush (byte-aligned, not final, no references
 * beyond itself), that piece is repeated, and an empty final block closes the stream. ~1 KB of output
 * per MiB of input: a decompression bomb for tests. `crc` continues from `crcBefore`.
 */
export function repeatedDeflate(pattern: Buffer, size: number, crcBefore = 0): { deflated: Buffer; size: number; crc: number } {
  const chunk = Buffer.alloc(Math.max(1, Math.floor((1024 * 1024) / pattern.length)) * pattern.length);
  for (let at = 0; at < chunk.length; at += pattern.length) pattern.copy(chunk, at);
  const piece = deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const whole = Math.floor(size / chunk.length);
  const parts: Buffer[] = [];
  let crc = crcBefore;
  for (let i = 0; i < whole; i++) {
    parts.push(piece);
    crc = crc32(chunk, crc);
  }
  const rest = chunk.subarray(0, size - whole * chunk.length);
  if (rest.length > 0) {
    parts.push(deflateRawSync(rest, { finishFlush: constants.Z_SYNC_FLUSH }));
    crc = crc32(rest, crc);
  }
  // BFINAL=1, fixed Huffman, end-of-block: the empty last block.
  parts.push(Buffer.from([0x03, 0x00]));
  return { deflated: Buffer.concat(parts), size, crc };
}

/** A ZIP (deflate, no ZIP64) from entries: enough for Office files built by tests. */
export function buildZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    let deflated: Buffer;
    let size: number;
    let crc: number;
    if ('deflated' in entry) {
      ({ deflated, size, crc } = entry);
    } else {
      const raw = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data, 'utf8');
      deflated = deflateRawSync(raw);
      size = raw.length;
      crc = crc32(raw);
    }
    const declared = entry.declaredSize ?? size;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(0x00210000, 12);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(deflated.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, deflated);
    centrals.push(central, name);
    offset += local.length + name.length + deflated.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const DOCX_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const DOCX_RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';

/** A minimal, valid DOCX whose body is `text`, built by hand (no zip library). */
export function buildSimpleDocx(text: string): Buffer {
  return buildZip([
    { name: '[Content_Types].xml', data: DOCX_TYPES },
    { name: '_rels/.rels', data: DOCX_RELS },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
    },
  ]);
}

const BOMBS = {
  docx: {
    part: 'word/document.xml',
    open: `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>`,
    unit: '<w:p><w:r><w:t>a</w:t></w:r></w:p>',
    close: '</w:body></w:document>',
    types: DOCX_TYPES,
  },
  xlsx: {
    part: 'xl/worksheets/sheet1.xml',
    open: '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>',
    unit: '<row><c t="inlineStr"><is><t>a</t></is></c></row>',
    close: '</sheetData></worksheet>',
    types:
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
  },
  pptx: {
    part: 'ppt/slides/slide1.xml',
    open: '<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody>',
    unit: '<a:p><a:r><a:t>a</a:t></a:r></a:p>',
    close: '</p:txBody></p:sp></p:spTree></p:cSld></p:sld>',
    types:
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
  },
};

/**
 * Office-shaped decompression bombs: the main part repeats a one-letter paragraph (a row, for
 * XLSX) until it holds about `size` bytes, so a parser that opens it builds millions of nodes.
 * The file is ~1 KB per MiB of `size`. `lie` declares 1 KB in the headers instead of the real size.
 */
export function officeBomb(kind: keyof typeof BOMBS, size: number, options: { lie?: boolean } = {}): Buffer {
  const { part, open, unit, close, types } = BOMBS[kind];
  // One deflate stream: the opening tags, the repeats, the closing tags, each ending on a byte boundary.
  const head = deflateRawSync(Buffer.from(open), { finishFlush: constants.Z_SYNC_FLUSH });
  const pattern = Buffer.from(unit);
  const repeats = Math.floor(size / pattern.length) * pattern.length;
  const body = repeatedDeflate(pattern, repeats, crc32(Buffer.from(open)));
  const tail = deflateRawSync(Buffer.from(close));
  const entry: ZipEntry = {
    name: part,
    deflated: Buffer.concat([head, body.deflated.subarray(0, body.deflated.length - 2), tail]),
    size: Buffer.byteLength(open) + repeats + Buffer.byteLength(close),
    crc: crc32(Buffer.from(close), body.crc),
    ...(options.lie ? { declaredSize: 1024 } : {}),
  };
  const rels: ZipEntry[] = kind === 'docx' ? [{ name: '_rels/.rels', data: DOCX_RELS }] : [];
  return buildZip([{ name: '[Content_Types].xml', data: types }, ...rels, entry]);
}

/**
 * A PNG decompression bomb: `width` × `height` 8-bit grey pixels, all black, in a file of ~1 KB per
 * MiB of pixels (50 000 × 50 000 is 2.5 G pixels in ~2.4 MB). The image data is complete and valid.
 */
export function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(data, crc32(Buffer.from(type, 'latin1'))) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  // Every row: filter byte 0 then `width` zero bytes; all zeros, so one long run.
  const rawSize = (width + 1) * height;
  const { deflated } = repeatedDeflate(Buffer.from([0]), rawSize);
  // zlib wrapper: header, raw deflate, Adler-32 (of zeros: a = 1, b = length mod 65521).
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((rawSize % 65521) * 65536 + 1) >>> 0, 0);
  const idat = Buffer.concat([Buffer.from([0x78, 0xda]), deflated, adler]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
