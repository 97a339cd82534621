import type { Span } from '../split';

export interface SummaryOptions {
  maxSentences?: number;
  maxChars?: number;
}

export interface ExtractiveSummary {
  /** The chosen sentences in document order, joined by a space: `metadata.summary`. */
  text: string;
  spans: Span[];
}

/** Sentences with fewer words rarely carry the gist (headings, "Thanks."). */
const MIN_WORDS = 4;
/** A sentence this similar to one already chosen repeats it. */
const REDUNDANT = 0.6;

type Vector = Map<string, number>;

/**
 * Picks the sentences most central to the text: each sentence is a TF-IDF vector, its centrality
 * the sum of its cosine similarities to every other sentence (a one-step TextRank), boosted for
 * sentences near the start where writers put the point. Deterministic: ties go to the earlier one.
 * Linear in the text: the sum of similarities is one dot product with the sum of all vectors.
 */
export function extractiveSummary(text: string, sentences: Span[], options: SummaryOptions = {}): ExtractiveSummary {
  const maxSentences = options.maxSentences ?? 3;
  const maxChars = options.maxChars ?? 600;
  if (!sentences.length || maxSentences <= 0 || maxChars <= 0) return { text: '', spans: [] };

  const words = sentences.map((s) => tokens(text.slice(s.start, s.end)));
  const vectors = tfIdf(words);
  const total: Vector = new Map();
  for (const v of vectors) for (const [term, w] of v) total.set(term, (total.get(term) ?? 0) + w);

  const scored = sentences.map((span, i) => {
    const v = vectors[i] as Vector;
    const centrality = dot(v, total) - dot(v, v);
    const position = 1 + 0.5 / (1 + i);
    const short = (words[i] as string[]).length < MIN_WORDS ? 0.25 : 1;
    return { span, i, score: (centrality + 1e-6) * position * short };
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);

  const chosen: typeof scored = [];
  let chars = 0;
  for (const candidate of scored) {
    if (chosen.length >= maxSentences) break;
    const length = candidate.span.end - candidate.span.start;
    if (chars + length + chosen.length > maxChars) continue;
    const v = vectors[candidate.i] as Vector;
    if (chosen.some((c) => dot(v, vectors[c.i] as Vector) > REDUNDANT)) continue;
    chosen.push(candidate);
    chars += length;
  }
  if (!chosen.length) return cutFirst(text, scored[0]?.span as Span, maxChars);
  chosen.sort((a, b) => a.i - b.i);
  return {
    text: chosen.map((c) => text.slice(c.span.start, c.span.end)).join(' '),
    spans: chosen.map((c) => c.span),
  };
}

/** Every sentence is longer than the budget: the best one is cut at a word boundary. */
function cutFirst(text: string, span: Span, maxChars: number): ExtractiveSummary {
  const sentence = text.slice(span.start, span.end);
  const room = sentence.slice(0, Math.max(1, maxChars - 1));
  const space = room.lastIndexOf(' ');
  const kept = (space > maxChars / 2 ? room.slice(0, space) : room).trimEnd();
  return { text: `${kept}…`, spans: [{ start: span.start, end: span.start + kept.length }] };
}

function tokens(sentence: string): string[] {
  return (sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => t.length > 1 || /\p{Script=Han}/u.test(t));
}

/** Unit-length TF-IDF vectors: IDF silences words every sentence has, in any language, without stop lists. */
function tfIdf(docs: string[][]): Vector[] {
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of new Set(doc)) df.set(term, (df.get(term) ?? 0) + 1);
  const n = docs.length;
  return docs.map((doc) => {
    const v: Vector = new Map();
    for (const term of doc) v.set(term, (v.get(term) ?? 0) + 1);
    let norm = 0;
    for (const [term, tf] of v) {
      const w = (1 + Math.log(tf)) * Math.log(1 + n / (df.get(term) ?? 1));
      v.set(term, w);
      norm += w * w;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [term, w] of v) v.set(term, w / norm);
    return v;
  });
}

function dot(a: Vector, b: Vector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let sum = 0;
  for (const [term, w] of small) sum += w * (large.get(term) ?? 0);
  return sum;
}
