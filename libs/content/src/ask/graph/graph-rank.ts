import type { Reranker } from '../../search/query/rerank';
import { collectAnswer, estimateTokens, type Generator } from '../generation';
import type { EdgeRow } from './graph-explore';

/** One relation as the context and the rankers see it: its edges (the same triplet may be found in several places). */
export interface Triplet {
  key: string;
  head: string;
  relation: string;
  tail: string;
  edges: (EdgeRow & { hop: number })[];
  /** The hop it was first reached at (0: it touches an entity of the question). */
  hop: number;
  score: number;
}

/** "A — relation → B": how a relation reads in the context. */
export const tripletText = (t: Pick<Triplet, 'head' | 'relation' | 'tail'>): string => `${t.head} — ${t.relation} → ${t.tail}`;

/** The edges grouped into distinct triplets (case-insensitive), a resource end shown by its title. */
export function triplets(edges: (EdgeRow & { hop: number })[], titles: Map<string, string>): Triplet[] {
  const byKey = new Map<string, Triplet>();
  const show = (value: string, type: string) => (type === 'resource' ? titles.get(value) || value : value);
  for (const e of edges) {
    const head = show(e.source_value, e.source_type);
    const tail = show(e.dest_value, e.dest_type);
    const relation = e.label || e.relation.toLowerCase();
    const key = JSON.stringify([head.toLowerCase(), relation.toLowerCase(), tail.toLowerCase()]);
    const t = byKey.get(key);
    if (t) {
      t.edges.push(e);
      t.hop = Math.min(t.hop, e.hop);
    } else byKey.set(key, { key, head, relation, tail, edges: [e], hop: e.hop, score: 0 });
  }
  return [...byKey.values()];
}

/**
 * The reranker's order (`relation_ranking: reranker`): each relation's text "subject relation object"
 * scored against the question by the request's reranker. Every relation starts level (score 0) in
 * the order of its closeness to the question's entities (hop), then text: relevance decides, and
 * among equals (and with `noop`) the nearest first.
 */
export async function rankByReranker(reranker: Reranker, question: string, list: Triplet[], signal?: AbortSignal): Promise<Triplet[]> {
  const ordered = [...list].sort((a, b) => a.hop - b.hop || a.key.localeCompare(b.key));
  const byId = new Map(ordered.map((t) => [`graph-relation:${t.key}`, t]));
  const ranked = await reranker.rerank(
    { text: question, signal },
    ordered.map((t) => ({ id: `graph-relation:${t.key}`, text: `${t.head} ${t.relation} ${t.tail}`, language: '', score: 0 })),
  );
  return ranked.map((c) => ({ ...(byId.get(c.id) as Triplet), score: c.score }));
}

/** The most a generative ranking reads (the reranker's best first), and the score (0–10) a relation must pass to be kept. */
export const GENERATIVE_RANKING = { maxTriplets: 100, threshold: 2, maxAnswerTokens: 4096 } as const;

const RANKING_SYSTEM_PROMPT =
  'You score knowledge graph relations (triplets) by how useful each is to answer a question: 0 (useless) to 10 (essential). ' +
  'Answer only with a JSON object {"scores": [numbers]}: one score per triplet, in the order given.';

/** Tokens the model calls of one answer used, added up (the answer's `metadata.tokens` and `consumption`). */
export interface TokenUsage {
  input: number;
  output: number;
}

/**
 * The generative order (`relation_ranking: generative`): the reranker's best `maxTriplets` scored by
 * the KB's generative model (0–10); those scoring `threshold` or less are dropped. Throws when the
 * model fails or its answer is not one score per triplet (the caller falls back to the reranker's order).
 * The call's tokens (the provider's count, else an estimate) are added to `usage` once it answered,
 * whether or not the answer could be used.
 */
export async function rankByGenerator(
  generator: Generator,
  question: string,
  ranked: Triplet[],
  signal?: AbortSignal,
  usage?: TokenUsage,
): Promise<Triplet[]> {
  const head = ranked.slice(0, GENERATIVE_RANKING.maxTriplets);
  if (!head.length) return head;
  const input = JSON.stringify({ question, triplets: head.map((t) => [t.head, t.relation, t.tail]) });
  const { answer, json, metadata } = await collectAnswer(
    generator.generate({
      question: input,
      context: [],
      chatHistory: [],
      systemPrompt: RANKING_SYSTEM_PROMPT,
      userPrompt: '{question}',
      citations: 'none',
      maxAnswerTokens: GENERATIVE_RANKING.maxAnswerTokens,
      signal,
      answerJsonSchema: generator.structuredAnswers
        ? {
            name: 'relation_scores',
            schema: {
              type: 'object',
              properties: { scores: { type: 'array', items: { type: 'number' } } },
              required: ['scores'],
              additionalProperties: false,
            },
          }
        : undefined,
    }),
  );
  if (usage) {
    usage.input += metadata?.inputTokens ?? estimateTokens(RANKING_SYSTEM_PROMPT + input);
    usage.output += metadata?.outputTokens ?? estimateTokens(json || answer);
  }
  const scores = readScores(json || answer);
  if (!scores || scores.length !== head.length) throw new Error('the model did not score every relation');
  return head
    .map((t, i) => ({ ...t, score: scores[i] as number, i }))
    .filter((t) => t.score > GENERATIVE_RANKING.threshold)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ i: _i, ...t }) => t);
}

/** `{"scores": [n, …]}` (possibly in a ```json fence) as numbers; undefined when it is not that. */
export function readScores(text: string): number[] | undefined {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    const v = JSON.parse(body) as { scores?: unknown };
    const scores = v?.scores;
    return Array.isArray(scores) && scores.every((x) => typeof x === 'number' && Number.isFinite(x)) ? (scores as number[]) : undefined;
  } catch {
    return undefined;
  }
}
