import { splitSentences } from './generation';

/** How long each kind of summary is, for one resource and for all of them together. */
export const SUMMARY_SIZE = {
  simple: { sentences: 3, chars: 600 },
  extended: { sentences: 8, chars: 2_000 },
} as const;

const WORD = /[\p{L}\p{N}]{3,}/gu;
/** Sentences with fewer words rarely carry the gist (headings, "Thanks."). */
const MIN_WORDS = 4;

type Vector = Map<string, number>;

function vectorOf(sentence: string): Vector {
  const v: Vector = new Map();
  for (const m of sentence.toLowerCase().matchAll(WORD)) v.set(m[0], (v.get(m[0]) ?? 0) + 1);
  let norm = 0;
  for (const w of v.values()) norm += w * w;
  norm = Math.sqrt(norm) || 1;
  for (const [t, w] of v) v.set(t, w / norm);
  return v;
}

function dot(a: Vector, b: Vector): number {
  let s = 0;
  for (const [t, w] of a) s += w * (b.get(t) ?? 0);
  return s;
}

/**
 * An extractive summary without a model: the sentences most central to the texts (the sum of
 * their cosine similarities to every other sentence, one dot product with the sum of all
 * vectors), with a small boost near the start where writers put the point, kept in text order,
 * within `sentences` and `chars`. Deterministic: ties go to the earlier sentence.
 */
export function centralSentences(texts: string[], size: { sentences: number; chars: number }): string {
  const sentences = texts
    .flatMap((t) => splitSentences(t))
    .map((s) => s.trim())
    .filter((s) => s);
  const candidates = sentences
    .map((text, i) => ({ text, i, v: vectorOf(text) }))
    .filter((c) => c.v.size >= MIN_WORDS || sentences.length <= size.sentences);
  const total: Vector = new Map();
  for (const c of candidates) for (const [t, w] of c.v) total.set(t, (total.get(t) ?? 0) + w);
  const scored = candidates.map((c) => ({ ...c, score: (dot(c.v, total) - dot(c.v, c.v)) * (1 + 0.5 / (1 + c.i)) }));
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  const picked: typeof scored = [];
  let chars = 0;
  for (const c of scored) {
    if (picked.length >= size.sentences) break;
    if (picked.some((p) => dot(p.v, c.v) > 0.8)) continue;
    if (picked.length && chars + c.text.length + 1 > size.chars) continue;
    picked.push(c);
    chars += c.text.length + 1;
  }
  const out = picked
    .sort((a, b) => a.i - b.i)
    .map((c) => c.text)
    .join(' ');
  return out.length > size.chars ? out.slice(0, size.chars) : out;
}
