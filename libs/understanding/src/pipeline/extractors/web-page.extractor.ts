import * as cheerio from 'cheerio';
import type { AnyNode } from 'domhandler';
import { isMainThread } from 'node:worker_threads';
import { DocumentBuilder } from './document-builder';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, WebPageOptions } from './extraction.types';
import { addHtmlBlocks, collectLinks } from './html-blocks';
import { READABILITY_WORKER_SOURCE } from './readability-worker.source';
import { runInWorker } from './run-in-worker';
import { extractionSandbox } from './sandbox/extraction-sandbox';
import { xpathToCss } from './xpath-to-css';

interface ReadableArticle {
  title: string | null;
  content: string | null;
  excerpt: string | null;
  lang: string | null;
}

/**
 * A web page's readable content: the selector's content when one is given, otherwise the main
 * content as Readability finds it (the whole body when it finds none). The title comes first as
 * a TITLE paragraph. Links are collected from the whole page and never followed.
 */
export async function extractWebPage(html: string, url: string, options: WebPageOptions = {}): Promise<ExtractedDocument> {
  return extractionSandbox().run<ExtractedDocument>({ kind: 'web-page', html, url, options });
}

/**
 * Shared by web pages and uploaded HTML files (`baseUrl` undefined: relative links are dropped).
 * Runs in the extraction sandbox (extractWebPage, extractFile); specs call it directly.
 */
export async function extractHtmlDocument(
  html: string,
  baseUrl: string | undefined,
  options: WebPageOptions = {},
): Promise<ExtractedDocument> {
  const $ = cheerio.load(html);
  const meta = (selector: string): string | undefined => $(selector).first().attr('content')?.trim() || undefined;
  const absolute = (href: string | undefined): string | undefined => {
    if (!href) return undefined;
    try {
      return new URL(href, baseUrl).href;
    } catch {
      return undefined;
    }
  };

  let nodes: AnyNode[];
  let readableTitle: string | undefined;
  let excerpt: string | undefined;
  const selector = options.css_selector?.trim() || (options.xpath?.trim() ? xpathToCss(options.xpath) : undefined);
  if (selector) {
    try {
      nodes = $(selector).toArray();
    } catch (err) {
      throw new ExtractionError(`Invalid CSS selector ${selector}: ${(err as Error).message}`, 'INVALID_SELECTOR');
    }
  } else {
    const article = await readable(html);
    readableTitle = article?.title?.trim() || undefined;
    excerpt = article?.excerpt?.trim() || undefined;
    nodes = article?.content ? cheerio.load(article.content, null, false).root().toArray() : $('body').toArray();
  }

  const title = meta('meta[property="og:title"]') ?? ($('title').first().text().trim() || readableTitle);
  const builder = new DocumentBuilder();
  if (title) builder.add(title, 'TITLE');
  const body = new DocumentBuilder();
  addHtmlBlocks(body, nodes);
  const bodyDoc = body.build();
  // Readability often keeps the page's <h1>, which repeats the title paragraph just added.
  for (const [i, p] of bodyDoc.paragraphs.entries()) {
    const text = bodyDoc.text.slice(p.start, p.end);
    if (i === 0 && p.kind === 'TITLE' && text === title) continue;
    builder.add(text, p.kind, p.is_a_table ? { is_a_table: true } : {});
  }

  const lang = $('html').attr('lang')?.trim().split(/[-_]/)[0]?.toLowerCase();
  const description = meta('meta[name="description"]') ?? meta('meta[property="og:description"]') ?? excerpt;
  const image = absolute(meta('meta[property="og:image"]') ?? meta('meta[name="twitter:image"]'));
  return builder.build({
    ...(title ? { title } : {}),
    ...(description ? { description } : {}),
    ...(lang ? { language: lang } : {}),
    ...(image ? { image } : {}),
    links: collectLinks($, baseUrl),
  });
}

/**
 * Readability's view of the page, or null when it finds no article (or fails: the body is used then).
 * Inside the sandbox it runs right there (plain Node loads linkedom); on the main thread (specs) in a
 * worker of its own, since jest's VM cannot load linkedom's ESM dependency.
 */
async function readable(html: string): Promise<ReadableArticle | null> {
  if (!isMainThread) return readableHere(html);
  const result = await runInWorker<{ ok: true; article: ReadableArticle | null }>(READABILITY_WORKER_SOURCE, {
    workerData: { html, linkedomPath: require.resolve('linkedom'), readabilityPath: require.resolve('@mozilla/readability') },
    timeoutMs: 15_000,
    maxMemoryMb: 512,
  });
  return result.ok ? result.article : null;
}

function readableHere(html: string): ReadableArticle | null {
  try {
    const { parseHTML } = require('linkedom') as { parseHTML(html: string): { document: unknown } };
    const { Readability } = require('@mozilla/readability') as { Readability: new (doc: unknown) => { parse(): ReadableArticle | null } };
    const article = new Readability(parseHTML(html).document).parse();
    return (
      article && {
        title: article.title || null,
        content: article.content || null,
        excerpt: article.excerpt || null,
        lang: article.lang || null,
      }
    );
  } catch {
    return null;
  }
}
