export interface Span {
  start: number;
  end: number;
}

export interface SplitParagraph extends Span {
  sentences: Span[];
}

/** Trims whitespace off both ends of a span of `text`. */
function trimSpan(text: string, start: number, end: number): Span | null {
  while (start < end && /\s/.test(text[start] as string)) start++;
  while (end > start && /\s/.test(text[end - 1] as string)) end--;
  return end > start ? { start, end } : null;
}

/**
 * Sentences end at . ! ? (and their CJK/Arabic forms) followed by whitespace, or at a line break.
 * Offsets are code-unit offsets into the field's extracted text, as paragraph ids use them.
 */
export function splitSentences(text: string, start: number, end: number): Span[] {
  const out: Span[] = [];
  const re = /[.!?。！？؟]+["'”’)\]]*(?=\s)|\n/g;
  re.lastIndex = start;
  let from = start;
  const slice = text.slice(0, end);
  let m: RegExpExecArray | null;
  while ((m = re.exec(slice)) !== null) {
    const stop = m.index + m[0].length;
    const span = trimSpan(text, from, stop);
    if (span) out.push(span);
    from = stop;
  }
  const last = trimSpan(text, from, end);
  if (last) out.push(last);
  return out;
}

/** Paragraphs are separated by blank lines; each carries its sentences. */
export function splitParagraphs(text: string): SplitParagraph[] {
  const out: SplitParagraph[] = [];
  const re = /\n[ \t]*\n+/g;
  let from = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const span = trimSpan(text, from, m.index);
    if (span) out.push({ ...span, sentences: splitSentences(text, span.start, span.end) });
    from = m.index + m[0].length;
  }
  const last = trimSpan(text, from, text.length);
  if (last) out.push({ ...last, sentences: splitSentences(text, last.start, last.end) });
  return out;
}
