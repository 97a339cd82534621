/**
 * JavaScript run in a worker thread by `pdf.extractor.ts`. It is a string (not a .ts module)
 * because the worker runs plain Node in every setting — jest's VM cannot import unpdf's ESM-only
 * pdfjs bundle, and a compiled module path would differ between source and build.
 * A worker also isolates pdfjs: a hostile PDF that exhausts memory kills the worker, not the
 * service, and a hung parse is terminated on timeout.
 *
 * In:  workerData { data: Uint8Array, password?, unpdfPath, canvasPath?, renderScale, thumbnailSize, pageImage? }
 * Out: { ok: true, numPages, info, pages: [{ number, paragraphs: string[], image?: Uint8Array }], thumbnail? }
 *      with pageImage { page, size }: { ok: true, numPages, image?: Uint8Array } (that page only, a PNG of at most size px)
 *      { ok: false, name, code, message }
 */
export const PDF_WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');

// pdfjs 5 calls ArrayBuffer.prototype.transferToFixedLength (Node >= 21) while rendering; Node 20
// lacks it. A copy has the same observable result for pdfjs. Patched in this worker only.
if (!ArrayBuffer.prototype.transferToFixedLength) {
  ArrayBuffer.prototype.transferToFixedLength = function (length) {
    const n = length === undefined ? this.byteLength : length;
    const copy = new ArrayBuffer(n);
    new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(n, this.byteLength)));
    return copy;
  };
}

// Lines whose baselines are further apart than this many line heights start a new paragraph.
const PARAGRAPH_GAP = 1.6;

function pageParagraphs(items) {
  const paragraphs = [];
  let paragraph = '';
  let line = '';
  let lastY = null;
  let lastHeight = 0;
  const endLine = () => {
    if (line.trim()) paragraph += (paragraph ? '\n' : '') + line.trim();
    line = '';
  };
  const endParagraph = () => {
    endLine();
    if (paragraph.trim()) paragraphs.push(paragraph.trim());
    paragraph = '';
  };
  for (const item of items) {
    if (typeof item.str !== 'string') continue;
    const y = item.transform[5];
    const height = Math.abs(item.height || item.transform[3]) || lastHeight || 10;
    if (lastY !== null && Math.abs(lastY - y) > height * 0.5) {
      endLine();
      if (Math.abs(lastY - y) > Math.max(height, lastHeight) * PARAGRAPH_GAP) endParagraph();
    }
    line += item.str;
    if (item.hasEOL) line += ' ';
    lastY = y;
    lastHeight = height;
  }
  endParagraph();
  return paragraphs;
}

async function main() {
  const unpdf = require(workerData.unpdfPath);
  const canvasImport = workerData.canvasPath ? () => Promise.resolve(require(workerData.canvasPath)) : undefined;
  // Image XObjects are drawn on scratch canvases from the document's own factory; the serverless
  // pdfjs build stubs that factory out, so the document gets the @napi-rs/canvas one.
  const CanvasFactory = canvasImport ? await unpdf.createIsomorphicCanvasFactory(canvasImport) : undefined;
  const pdf = await unpdf.getDocumentProxy(workerData.data, { password: workerData.password, verbosity: 0, CanvasFactory });
  if (workerData.pageImage) {
    const { page: n, size } = workerData.pageImage;
    const numPages = pdf.numPages;
    let image;
    if (n >= 1 && n <= numPages && canvasImport) {
      const page = await pdf.getPage(n);
      const view = page.getViewport({ scale: 1 });
      const scale = size / Math.max(view.width, view.height);
      image = new Uint8Array(await unpdf.renderPageAsImage(pdf, n, { canvasImport, scale }));
      page.cleanup();
    }
    await pdf.destroy();
    return { ok: true, numPages, image };
  }
  const meta = await pdf.getMetadata().catch(() => ({ info: {} }));
  const info = {};
  for (const [k, v] of Object.entries(meta.info || {})) if (typeof v === 'string' && v.trim()) info[k] = v.trim();
  const pages = [];
  let thumbnail;
  for (let n = 1; n <= pdf.numPages; n++) {
    const page = await pdf.getPage(n);
    const content = await page.getTextContent();
    const paragraphs = pageParagraphs(content.items);
    const entry = { number: n, paragraphs };
    if (!paragraphs.length && workerData.renderScale > 0 && canvasImport) {
      entry.image = new Uint8Array(await unpdf.renderPageAsImage(pdf, n, { canvasImport, scale: workerData.renderScale }));
    }
    if (n === 1 && workerData.thumbnailSize > 0 && canvasImport) {
      const view = page.getViewport({ scale: 1 });
      const scale = workerData.thumbnailSize / Math.max(view.width, view.height);
      thumbnail = new Uint8Array(await unpdf.renderPageAsImage(pdf, n, { canvasImport, scale }));
    }
    page.cleanup();
    pages.push(entry);
  }
  const numPages = pdf.numPages;
  await pdf.destroy();
  return { ok: true, numPages, info, pages, thumbnail };
}

main().then(
  (result) => parentPort.postMessage(result),
  (err) => parentPort.postMessage({ ok: false, name: err && err.name, code: err && err.code, message: String((err && err.message) || err) }),
);
`;
