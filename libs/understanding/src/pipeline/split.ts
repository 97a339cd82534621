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

/** A split strategy's sizes (`SplitConfigDto`): chunks of at most `max` characters, `overlap` repeated. */
export interface ChunkSizes {
  max: number;
  overlap: number;
}

const SENTENCE_END = /[.!?。！？؟]["'”’)\]]*\s/g;

/**
 * Where to end a chunk that starts at `start` and may not pass `limit`: after the last sentence
 * end in its second half, else at its last whitespace there, else at `limit` (one long word).
 */
function cutPoint(text: string, start: number, limit: number): number {
  const floor = start + Math.floor((limit - start) / 2);
  const window = text.slice(floor, limit + 1);
  let best = -1;
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(window); m !== null; m = SENTENCE_END.exec(window)) {
    const at = floor + m.index + m[0].length - 1;
    if (at <= limit) best = at;
  }
  if (best > start) return best;
  for (let i = limit; i > floor; i--) if (/\s/.test(text[i] as string)) return i;
  return limit;
}

/**
 * Spans longer than `max` characters cut into chunks of at most `max` (at sentence ends, else at
 * word ends), each repeating up to `overlap` characters of the end of the one before, from a word
 * start. Other members of a span (kind, page, seconds) stay on each of its chunks.
 */
export function chunkSpans<T extends Span>(text: string, spans: readonly T[], sizes: ChunkSizes): T[] {
  const max = Math.max(1, Math.floor(sizes.max));
  const overlap = Math.max(0, Math.min(Math.floor(sizes.overlap), Math.floor(max / 2)));
  const out: T[] = [];
  for (const span of spans) {
    if (span.end - span.start <= max) {
      out.push(span);
      continue;
    }
    let start = span.start;
    while (start < span.end) {
      const limit = Math.min(start + max, span.end);
      const cut = limit < span.end ? cutPoint(text, start, limit) : limit;
      const piece = trimSpan(text, start, cut);
      if (piece) out.push({ ...span, start: piece.start, end: piece.end });
      if (cut >= span.end) break;
      let next = Math.max(cut - overlap, start + 1);
      // An overlap starts at a word, never in the middle of one.
      if (overlap > 0) while (next < cut && !/\s/.test(text[next - 1] as string)) next++;
      start = next;
    }
  }
  return out;
}
