/**
 * JavaScript run in a worker thread by `web-page.extractor.ts`: Readability over a linkedom DOM.
 * linkedom's CommonJS build requires the ESM-only css-select, which Node 20.19+ loads natively but
 * jest's VM cannot — so this runs where plain Node runs it. It also caps what a pathological page
 * can cost (time and heap) outside the service's main thread.
 *
 * In:  workerData { html, url?, linkedomPath, readabilityPath }
 * Out: { ok: true, article: { title, content, excerpt, lang } | null } | { ok: false, message }
 */
export const READABILITY_WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
try {
  const { parseHTML } = require(workerData.linkedomPath);
  const { Readability } = require(workerData.readabilityPath);
  const { document } = parseHTML(workerData.html);
  const article = new Readability(document).parse();
  parentPort.postMessage({
    ok: true,
    article: article && { title: article.title || null, content: article.content || null, excerpt: article.excerpt || null, lang: article.lang || null },
  });
} catch (err) {
  parentPort.postMessage({ ok: false, message: String((err && err.message) || err) });
}
`;
