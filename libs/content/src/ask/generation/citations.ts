import type { GenerationContext } from './generator';
import { contentTerms, normalise, sentenceSpans } from './text';

/** Paragraph key → `[start, end)` spans of the answer it supports (API-MAP 2.4 `citations`). */
export type Citations = Record<string, [number, number][]>;

export const DEFAULT_CITATION_THRESHOLD = 0.4;
export const DEFAULT_GROUNDEDNESS_THRESHOLD = 0.5;

/** Footnote markers: `[1]`, `[^1]`, `[1, 2]`, `[^block-AA]`. */
const FOOTNOTE = /\[\^?([\w-]+(?:\s*,\s*\^?[\w-]+)*)\]/g;

interface Passage {
  key: string;
  terms: Set<string>;
  bigrams: Set<string>;
  flat: string;
}

/**
 * Aligns each answer sentence with the context paragraph that supports it best and cites that
 * paragraph for the sentence's span of the ANSWER (UTF-16 offsets, end exclusive); a sentence no
 * paragraph supports to `threshold` is not cited. Support is the share of the sentence's content
 * terms, and of its term bigrams, found in the paragraph; a sentence quoted verbatim scores 1.
 * Ties go to the better-ranked paragraph. Only keys of `context` are ever cited; adjacent spans
 * citing one paragraph are merged.
 */
export function computeCitations(answer: string, context: GenerationContext[], threshold = DEFAULT_CITATION_THRESHOLD): Citations {
  const passages = prepare(context);
  const citations: Citations = {};
  for (const span of sentenceSpans(answer)) {
    const best = bestSupport(answer.slice(span.start, span.end), passages);
    if (!best || best.score < threshold) continue;
    const spans = (citations[best.key] ??= []);
    const last = spans[spans.length - 1];
    if (last && !answer.slice(last[1], span.start).trim()) last[1] = span.end;
    else spans.push([span.start, span.end]);
  }
  return citations;
}

/**
 * For `llm_footnotes`: the footnotes the answer actually uses, mapped to their context keys
 * (API-MAP 2.4 `footnote_to_context`). Markers the prompt never offered are ignored.
 */
export function footnoteCitations(answer: string, footnotes: Record<string, string>): Record<string, string> {
  const used: Record<string, string> = {};
  for (const match of answer.matchAll(FOOTNOTE)) {
    for (const raw of (match[1] as string).split(',')) {
      const id = raw.trim().replace(/^\^/, '');
      if (Object.prototype.hasOwnProperty.call(footnotes, id)) used[id] = footnotes[id] as string;
    }
  }
  return used;
}

/** The answer without footnote markers, for display or scoring. */
export function stripFootnotes(answer: string): string {
  return answer.replace(FOOTNOTE, '').replace(/[ \t]+([.,;:!?])/g, '$1');
}

/**
 * Share of the answer's sentences that some context paragraph supports to `threshold` (the same
 * measure as citations). An answer with no content sentence claims nothing and scores 1.
 */
export function groundedness(answer: string, context: GenerationContext[], threshold = DEFAULT_GROUNDEDNESS_THRESHOLD): number {
  const passages = prepare(context);
  let sentences = 0;
  let supported = 0;
  for (const span of sentenceSpans(answer)) {
    const text = answer.slice(span.start, span.end);
    if (!contentTerms(stripFootnotes(text)).length) continue;
    sentences++;
    const best = bestSupport(text, passages);
    if (best && best.score >= threshold) supported++;
  }
  return sentences ? supported / sentences : 1;
}

/** How well `passage` supports `sentence`, from 0 to 1 (see computeCitations). */
export function supportScore(sentence: string, passage: string): number {
  return bestSupport(sentence, prepare([{ key: '', text: passage }]))?.score ?? 0;
}

function prepare(context: GenerationContext[]): Passage[] {
  const seen = new Set<string>();
  const out: Passage[] = [];
  for (const c of context) {
    if (seen.has(c.key)) continue;
    seen.add(c.key);
    const terms = contentTerms(c.text);
    out.push({ key: c.key, terms: new Set(terms), bigrams: bigramSet(terms), flat: flatten(c.text) });
  }
  return out;
}

function bestSupport(sentence: string, passages: Passage[]): { key: string; score: number } | null {
  const clean = stripFootnotes(sentence);
  const terms = contentTerms(clean);
  if (!terms.length) return null;
  const unique = new Set(terms);
  const pairs = bigramSet(terms);
  const flat = flatten(clean);
  let best: { key: string; score: number } | null = null;
  for (const p of passages) {
    let score: number;
    if (flat && p.flat.includes(flat)) score = 1;
    else {
      const unigram = share(unique, p.terms);
      score = pairs.size ? 0.6 * unigram + 0.4 * share(pairs, p.bigrams) : unigram;
    }
    if (!best || score > best.score) best = { key: p.key, score };
  }
  return best;
}

function share(items: Set<string>, within: Set<string>): number {
  let found = 0;
  items.forEach((x) => (found += within.has(x) ? 1 : 0));
  return items.size ? found / items.size : 0;
}

function bigramSet(terms: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i < terms.length; i++) out.add(`${terms[i - 1]} ${terms[i]}`);
  return out;
}

/** Case, accents and spacing do not matter when checking for a verbatim quote. */
function flatten(text: string): string {
  return normalise(text).replace(/\s+/g, ' ').trim();
}
