import * as cheerio from 'cheerio';
import mammoth from 'mammoth';
import { parseOffice, type OfficeContentNode } from 'officeparser';
import { DocumentBuilder } from './document-builder';
import { asCorrupt } from './extraction.error';
import type { ExtractedDocument } from './extraction.types';
import { addHtmlBlocks, collectLinks } from './html-blocks';

/**
 * Word documents go through mammoth's HTML (it maps Word heading styles to <h1>…<h6>), so headings
 * become TITLE paragraphs, table rows TABLE paragraphs and the rest TEXT. The first heading is the title.
 */
export async function extractDocx(data: Buffer): Promise<ExtractedDocument> {
  const { value: html } = await asCorrupt('Word document', () => mammoth.convertToHtml({ buffer: data }));
  const $ = cheerio.load(html, null, false);
  const builder = new DocumentBuilder();
  addHtmlBlocks(builder, $.root().toArray());
  const doc = builder.build();
  const firstTitle = doc.paragraphs.find((p) => p.kind === 'TITLE');
  const links = collectLinks($, undefined);
  return {
    ...doc,
    ...(firstTitle ? { title: doc.text.slice(firstTitle.start, firstTitle.end) } : {}),
    ...(links.length ? { links } : {}),
  };
}

/**
 * PowerPoint: every slide's text, then its speaker notes, each paragraph carrying the slide
 * number as its page. Core properties (title, author, subject) go to metadata.
 */
export async function extractPptx(data: Buffer): Promise<ExtractedDocument> {
  const ast = await asCorrupt('Presentation', () =>
    parseOffice(data, { ignoreNotes: false, putNotesAtLast: false, extractAttachments: false, ocr: false }),
  );
  const builder = new DocumentBuilder();
  let slides = 0;
  for (const node of ast.content) {
    if (node.type !== 'slide' && node.type !== 'note') continue;
    const page = (node.metadata as { slideNumber?: number } | undefined)?.slideNumber;
    if (node.type === 'slide') slides++;
    addOfficeNodes(builder, node.children ?? [], page ? { page } : {});
  }
  const meta = ast.metadata;
  const metadata: Record<string, string> = {};
  if (meta.author) metadata['author'] = meta.author;
  if (meta.subject) metadata['subject'] = meta.subject;
  if (meta.description) metadata['description'] = meta.description;
  if (meta.lastModifiedBy) metadata['last_modified_by'] = meta.lastModifiedBy;
  return builder.build({ pages: slides, metadata, ...(meta.title ? { title: meta.title } : {}) });
}

function addOfficeNodes(builder: DocumentBuilder, nodes: OfficeContentNode[], extras: { page?: number }): void {
  for (const node of nodes) {
    if (node.type === 'table') {
      for (const row of node.children ?? []) {
        const cells = (row.children ?? []).map((c) => nodeText(c).replace(/\s+/g, ' ').trim());
        builder.add(cells.join(' | '), 'TABLE', { ...extras, is_a_table: true });
      }
    } else if (node.type === 'heading') {
      builder.add(nodeText(node), 'TITLE', extras);
    } else if (node.type === 'paragraph' || node.type === 'list' || node.type === 'text') {
      builder.add(nodeText(node), 'TEXT', extras);
    } else if (node.children?.length) {
      addOfficeNodes(builder, node.children, extras);
    }
  }
}

function nodeText(node: OfficeContentNode): string {
  if (typeof node.text === 'string' && node.text) return node.text;
  return (node.children ?? []).map(nodeText).join('');
}
