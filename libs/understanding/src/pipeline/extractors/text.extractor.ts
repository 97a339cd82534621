import { addBlankLineParagraphs, DocumentBuilder } from './document-builder';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, ExtractedParagraph } from './extraction.types';

/** UTF-8 (BOM dropped); bytes that are not valid UTF-8 are read as Windows-1252, the usual legacy encoding. */
export function decodeText(data: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(data);
  } catch {
    return new TextDecoder('windows-1252').decode(data);
  }
}

export function extractPlainText(data: Buffer): ExtractedDocument {
  const builder = new DocumentBuilder();
  addBlankLineParagraphs(builder, decodeText(data));
  return builder.build();
}

/**
 * Markdown loses its inline markup; headings become TITLE paragraphs (the first one is the title),
 * fenced code stays one paragraph even when it holds blank lines.
 */
export function extractMarkdown(data: Buffer): ExtractedDocument {
  const builder = new DocumentBuilder();
  let title: string | undefined;
  let block: string[] = [];
  let fence: string[] | null = null;
  const flush = (): void => {
    if (block.length) builder.add(stripInline(block.join('\n')));
    block = [];
  };
  for (const line of decodeText(data).replace(/\r\n?/g, '\n').split('\n')) {
    if (fence) {
      if (/^\s*(```|~~~)/.test(line)) {
        builder.add(fence.join('\n'));
        fence = null;
      } else fence.push(line);
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      fence = [];
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const text = stripInline(heading[1] ?? '');
      if (builder.add(text, 'TITLE')) title ??= text;
      continue;
    }
    if (!line.trim()) flush();
    else block.push(line);
  }
  if (fence) builder.add(fence.join('\n'));
  flush();
  return builder.build(title ? { title } : {});
}

function stripInline(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(.*?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S[^*_]*?)[*_](?=\W|$)/g, '$1$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/^\s*[-*+]\s+/gm, '')
    .replace(/^\s*>\s?/gm, '');
}

/**
 * Indented JSON; each top-level member (or array element) is one paragraph, so a big export
 * does not end up as a single paragraph.
 */
export function extractJson(data: Buffer): ExtractedDocument {
  let value: unknown;
  try {
    value = JSON.parse(decodeText(data));
  } catch (err) {
    throw new ExtractionError(`Invalid JSON: ${(err as Error).message}`, 'CORRUPT_FILE');
  }
  const members: string[] = Array.isArray(value)
    ? value.map((v) => JSON.stringify(v, null, 2))
    : value !== null && typeof value === 'object'
      ? Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v, null, 2)}`)
      : [];
  if (!members.length) {
    const text = JSON.stringify(value, null, 2);
    return { text, paragraphs: [{ start: 0, end: text.length, kind: 'TEXT' }] };
  }
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  let text = `${open}\n`;
  const paragraphs: ExtractedParagraph[] = [];
  members.forEach((m, i) => {
    const body = m.replace(/\n/g, '\n  ');
    const start = text.length + 2;
    text += `  ${body}${i < members.length - 1 ? ',' : ''}\n`;
    paragraphs.push({ start, end: start + body.length, kind: 'TEXT' });
  });
  text += close;
  return { text, paragraphs };
}
