import * as cheerio from 'cheerio';
import { addBlankLineParagraphs, DocumentBuilder } from './document-builder';
import { asCorrupt } from './extraction.error';
import type { ExtractedDocument, NestedFile } from './extraction.types';
import { addHtmlBlocks, collectLinks } from './html-blocks';

// mailparser ships no type declarations; these are the members used here.
interface AddressObject {
  text: string;
}
interface ParsedMail {
  subject?: string;
  from?: AddressObject;
  to?: AddressObject | AddressObject[];
  cc?: AddressObject | AddressObject[];
  date?: Date;
  messageId?: string;
  text?: string;
  html?: string | false;
  attachments: { filename?: string; contentType: string; content: Buffer; related?: boolean }[];
}
const { simpleParser } = require('mailparser') as {
  simpleParser(
    source: Buffer,
    options?: { skipImageLinks?: boolean; skipHtmlToText?: boolean; skipTextToHtml?: boolean },
  ): Promise<ParsedMail>;
};

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"')\]]+/gi;

/**
 * An e-mail (.eml): the subject is the title and first paragraph, then the plain-text body (or the
 * HTML body's text when there is no plain part). From/to/cc/date go to metadata; attachments are
 * handed back in `nested` for the caller to extract, except inline images the HTML refers to.
 */
export async function extractEmail(data: Buffer): Promise<ExtractedDocument> {
  // mailparser would otherwise invent a text body from the HTML (upper-casing headings); the HTML
  // is turned into paragraphs here instead, like any other HTML.
  const mail = await asCorrupt('E-mail', () => simpleParser(data, { skipImageLinks: true, skipHtmlToText: true, skipTextToHtml: true }));
  const builder = new DocumentBuilder();
  const subject = mail.subject?.trim();
  if (subject) builder.add(subject, 'TITLE');
  let links: string[] = [];
  if (mail.html) {
    const $ = cheerio.load(mail.html);
    links = collectLinks($, undefined);
    if (!mail.text?.trim()) addHtmlBlocks(builder, $('body').toArray());
  }
  if (mail.text?.trim()) {
    addBlankLineParagraphs(builder, mail.text);
    for (const m of mail.text.matchAll(URL_IN_TEXT)) {
      try {
        const url = new URL(m[0].replace(/[.,;:!?]+$/, ''));
        url.hash = '';
        links.push(url.href);
      } catch {
        // Not a URL after all (e.g. "http://" alone).
      }
    }
  }
  const metadata: Record<string, string> = {};
  const addresses = (a: AddressObject | AddressObject[] | undefined): string | undefined =>
    a === undefined ? undefined : (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ') || undefined;
  const from = addresses(mail.from);
  const to = addresses(mail.to);
  const cc = addresses(mail.cc);
  if (from) metadata['from'] = from;
  if (to) metadata['to'] = to;
  if (cc) metadata['cc'] = cc;
  if (mail.date && !Number.isNaN(mail.date.getTime())) metadata['date'] = mail.date.toISOString();
  if (mail.messageId) metadata['message_id'] = mail.messageId;
  const nested: NestedFile[] = mail.attachments
    .filter((a) => !a.related)
    .map((a, i) => ({ filename: a.filename ?? `attachment-${i + 1}`, content_type: a.contentType, data: a.content }));
  return builder.build({
    ...(subject ? { title: subject } : {}),
    metadata,
    links: [...new Set(links)],
    ...(nested.length ? { nested } : {}),
  });
}
