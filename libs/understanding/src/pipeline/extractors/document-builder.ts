import type { ExtractedDocument, ExtractedParagraph, ExtractedParagraphKind } from './extraction.types';

type ParagraphExtras = Omit<ExtractedParagraph, 'start' | 'end' | 'kind'>;

/**
 * Accumulates paragraphs into one text, separated by blank lines, recording exact trimmed
 * offsets as it goes, so offsets always index into the final text (no re-searching afterwards).
 */
export class DocumentBuilder {
  private text = '';
  private readonly paragraphs: ExtractedParagraph[] = [];

  /** Adds a paragraph; blank content is skipped. Returns whether something was added. */
  add(content: string, kind: ExtractedParagraphKind = 'TEXT', extras: ParagraphExtras = {}): boolean {
    const trimmed = content.replace(/\r\n?/g, '\n').trim();
    if (!trimmed) return false;
    if (this.text) this.text += '\n\n';
    const start = this.text.length;
    this.text += trimmed;
    this.paragraphs.push({ start, end: this.text.length, kind, ...extras });
    return true;
  }

  get isEmpty(): boolean {
    return this.paragraphs.length === 0;
  }

  build(rest: Omit<ExtractedDocument, 'text' | 'paragraphs'> = {}): ExtractedDocument {
    return { ...rest, text: this.text, paragraphs: [...this.paragraphs] };
  }
}

/** Splits on blank lines (as the text-field splitter does) and adds each block. */
export function addBlankLineParagraphs(
  builder: DocumentBuilder,
  text: string,
  kind: ExtractedParagraphKind = 'TEXT',
  extras: ParagraphExtras = {},
): void {
  for (const block of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n+/)) builder.add(block, kind, extras);
}
