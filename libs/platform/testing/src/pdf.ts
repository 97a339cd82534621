/**
 * PDF files for tests and benchmarks, written by hand (objects, xref, trailer) so callers control
 * text layers, image-only pages and the Standard security handler (RC4 40-bit, revision 2) byte
 * for byte. Nothing is downloaded.
 */
import { createHash } from 'node:crypto';

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
    return add(
      Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]),
    );
  };
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pagesRef = objects.length + 1 + 1; // after the catalog
  const catalog = add(`<< /Type /Catalog /Pages ${pagesRef} 0 R >>`);
  add('PAGES');
  const kids: number[] = [];
  for (const page of pages) {
    if ('lines' in page) {
      const ops = page.lines
        .map((l, i) => (l === '' ? '' : `BT /F1 14 Tf 72 ${720 - i * 20} Td (${l.replace(/[()\\]/g, '\\$&')}) Tj ET`))
        .join('\n');
      const content = stream('', Buffer.from(ops, 'latin1'));
      kids.push(
        add(
          `<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
        ),
      );
    } else {
      const img = stream(
        `/Type /XObject /Subtype /Image /Width ${page.width} /Height ${page.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode`,
        page.jpeg,
      );
      const content = stream('', Buffer.from(`q ${page.width} 0 0 ${page.height} 0 0 cm /Im1 Do Q`, 'latin1'));
      kids.push(
        add(
          `<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 ${page.width} ${page.height}] /Resources << /XObject << /Im1 ${img} 0 R >> >> /Contents ${content} 0 R >>`,
        ),
      );
    }
  }
  const infoRef = options.title && !objectKey ? add(`<< /Title (${options.title}) /Author (Ada Lovelace) >>`) : 0;
  objects[pagesRef - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0].length;
  objects.forEach((o, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      typeof o === 'string' ? Buffer.from(o, 'latin1') : o,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
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
