import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { DocumentBuilder } from './document-builder';

const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'html',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
  'caption',
]);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'svg', 'canvas', 'head', 'button', 'select', 'object']);
const HEADING = /^h[1-6]$/;

/**
 * Adds the readable blocks of an HTML fragment to `builder`: headings as TITLE, each table row as
 * a TABLE paragraph (cells joined with ' | '), every other block's inline text as TEXT. Inline
 * whitespace collapses as a browser would render it; <pre> keeps its lines.
 */
export function addHtmlBlocks(builder: DocumentBuilder, nodes: AnyNode[]): void {
  let inline = '';
  const flush = (): void => {
    builder.add(inline);
    inline = '';
  };
  const walk = (node: AnyNode): void => {
    if (node.type === 'text') {
      inline += textOf(node).replace(/\s+/g, ' ');
      return;
    }
    if (node.type !== 'tag' && node.type !== 'root') return;
    const el = node as Element;
    const name = node.type === 'tag' ? el.name.toLowerCase() : '';
    if (SKIP.has(name)) return;
    if (name === 'br') {
      inline += '\n';
      return;
    }
    if (HEADING.test(name)) {
      flush();
      builder.add(collapse(textOf(el)), 'TITLE');
      return;
    }
    if (name === 'tr') {
      flush();
      const cells = el.children.filter((c): c is Element => c.type === 'tag' && (c.name === 'td' || c.name === 'th'));
      builder.add(cells.map((c) => collapse(textOf(c))).join(' | '), 'TABLE', { is_a_table: true });
      return;
    }
    if (name === 'pre') {
      flush();
      builder.add(textOf(el));
      return;
    }
    const block = BLOCK.has(name) || node.type === 'root';
    if (block) flush();
    for (const child of el.children ?? []) walk(child);
    if (block) flush();
  };
  for (const node of nodes) walk(node);
  flush();
}

function textOf(node: AnyNode): string {
  if (node.type === 'text') return (node as unknown as { data: string }).data;
  if (node.type !== 'tag') return '';
  const el = node as Element;
  if (SKIP.has(el.name.toLowerCase())) return '';
  if (el.name.toLowerCase() === 'br') return '\n';
  return el.children.map(textOf).join('');
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Absolute http(s) URLs of every link in the document, resolved against `baseUrl`, without fragments, deduplicated. */
export function collectLinks($: cheerio.CheerioAPI, baseUrl: string | undefined): string[] {
  const base = $('base[href]').attr('href');
  let resolvedBase = baseUrl;
  if (base) {
    try {
      resolvedBase = new URL(base, baseUrl).href;
    } catch {
      // A broken <base> is ignored, as browsers do.
    }
  }
  const out = new Set<string>();
  $('a[href], area[href]').each((_, el) => {
    const href = $(el).attr('href')?.trim();
    if (!href) return;
    try {
      const url = new URL(href, resolvedBase);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
      url.hash = '';
      out.add(url.href);
    } catch {
      // Relative links in a document without a base address cannot be made absolute.
    }
  });
  return [...out];
}
