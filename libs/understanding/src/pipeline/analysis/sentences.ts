import { splitSentences, type Span } from '../split';
import { analyseEnglish } from './wink';

/**
 * Sentence spans of `text[start, end)`, as UTF-16 offsets into `text`. English goes through wink,
 * which knows abbreviations (Dr., U.S., e.g.) and quotes; every other language, and any text wink
 * cannot align, uses the regex splitter of split.ts, which only needs punctuation.
 */
export function sentenceSpans(text: string, start: number, end: number, language: string | undefined): Span[] {
  if (language !== 'en') return splitSentences(text, start, end);
  return splitEnglishSentences(text, start, end) ?? splitSentences(text, start, end);
}

/**
 * wink does not treat a line break as a boundary, yet headings, list items and table rows are one
 * line each. A break counts as a boundary unless the next line starts in lower case, which is how
 * a hard-wrapped sentence (PDF text) continues.
 */
export function splitEnglishSentences(text: string, start: number, end: number): Span[] | null {
  const out: Span[] = [];
  const lineBreak = /\n(?=\s*(?:[^\s\p{Ll}]|$))/gu;
  lineBreak.lastIndex = start;
  const slice = text.slice(0, end);
  let from = start;
  let m: RegExpExecArray | null;
  while ((m = lineBreak.exec(slice)) !== null) {
    if (!pushBlock(text, from, m.index, out)) return null;
    from = m.index + 1;
  }
  return pushBlock(text, from, end, out) ? out : null;
}

function pushBlock(text: string, from: number, to: number, out: Span[]): boolean {
  const block = text.slice(from, to);
  if (!/\S/.test(block)) return true;
  const analysis = analyseEnglish(block);
  if (!analysis) return false;
  for (const s of analysis.sentences) {
    const span = trim(text, from + s.start, from + s.end);
    if (span) out.push(span);
  }
  return true;
}

function trim(text: string, start: number, end: number): Span | null {
  while (start < end && /\s/.test(text[start] as string)) start++;
  while (end > start && /\s/.test(text[end - 1] as string)) end--;
  return end > start ? { start, end } : null;
}
