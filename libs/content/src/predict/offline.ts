import type { ChatTurn } from '../ask/generation';
import { contentTerms, estimateTokens, sentenceSpans, wordTokens } from '../ask/generation/text';

/** Words that point back to something said before ("what about its price?"). */
const REFERRING = new Set(
  'it its they them their theirs this that these those he him his she her hers there one ones same former latter'.split(' '),
);
/** Most words of the earlier question added to a follow-up. */
const MAX_ADDED_WORDS = 12;
/** Sentences of an offline summary, and its default token budget. */
const SUMMARY_SENTENCES = 3;
const SUMMARY_TOKENS = 150;

/**
 * An extractive summary without a model: the text's most central sentences (those whose content
 * terms are most frequent in the whole text, the first sentence slightly favoured), in text order,
 * within `maxTokens` (default 150) — at least one sentence.
 */
export function extractiveSummary(text: string, maxTokens = SUMMARY_TOKENS): string {
  const spans = sentenceSpans(text);
  if (spans.length === 0) return '';
  const sentences = spans.map((s) => text.slice(s.start, s.end));
  const terms = sentences.map((s) => contentTerms(s));
  const frequency = new Map<string, number>();
  for (const ts of terms) for (const t of new Set(ts)) frequency.set(t, (frequency.get(t) ?? 0) + 1);
  const scored = sentences.map((s, i) => {
    const distinct = [...new Set(terms[i])];
    const weight = distinct.reduce((sum, t) => sum + (frequency.get(t) ?? 0), 0) / Math.sqrt(distinct.length || 1);
    return { i, s, score: weight * (i === 0 ? 1.2 : 1) };
  });
  const picked: { i: number; s: string }[] = [];
  let tokens = 0;
  for (const c of [...scored].sort((a, b) => b.score - a.score || a.i - b.i)) {
    if (picked.length >= SUMMARY_SENTENCES) break;
    const cost = estimateTokens(c.s);
    if (picked.length > 0 && tokens + cost > maxTokens) continue;
    picked.push(c);
    tokens += cost;
  }
  return picked
    .sort((a, b) => a.i - b.i)
    .map((c) => c.s)
    .join(' ');
}

/**
 * A follow-up question made standalone without a model: when the conversation has an earlier user
 * question and this one refers back (a pronoun such as "it", or two content words at most), the
 * earlier question's content words it lacks are added in brackets — what a search needs. Otherwise
 * the question is returned as it is.
 */
export function offlineRephrase(question: string, history: ChatTurn[]): string {
  const q = question.trim();
  const previous = [...history].reverse().find((t) => t.author === 'USER' && t.text.trim() && t.text.trim() !== q);
  if (!previous) return q;
  const words = wordTokens(q);
  const refersBack = words.some((w) => REFERRING.has(w)) || contentTerms(q).length <= 2;
  if (!refersBack) return q;
  const have = new Set(contentTerms(q));
  const added: string[] = [];
  for (const raw of previous.text.match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []) {
    const terms = contentTerms(raw);
    const term = terms[0];
    if (!term || have.has(term) || added.length >= MAX_ADDED_WORDS) continue;
    have.add(term);
    added.push(raw);
  }
  return added.length ? `${q} (${added.join(' ')})` : q;
}
