import { contentWords, sentences, stemSet, support } from './remi-text';

/**
 * The offline REMi scorer (spec 4.4, docs/remi.md): answer relevance, context relevance per context
 * piece and groundedness per answer sentence, each 0–5, from lexical support (content words, names
 * and numbers weighing more) and, when vectors are given, the built-in semantic model's cosine.
 * Weights and cosine ranges were set on `hotpotqa-53` (docs/benchmarks.md, "REMi scores").
 */

export interface RemiInput {
  question: string;
  answer: string;
  context: { key: string; text: string }[];
  /** The answer said there was nothing to answer from (no retrieval data / no context). */
  noContext?: boolean;
}

export interface RemiScores {
  answer_relevance: { score: number; reason: string };
  context_relevance: number[];
  groundedness: number[];
}

/** Unit vectors of texts (null where none could be had); the scorer works without them. */
export type EmbedTexts = (texts: string[]) => Promise<(number[] | null)[] | null>;

export const REMI_LIMITS = { contextPieces: 50, answerSentences: 50 } as const;

/** Cosine ranges mapped onto 0–1 (below: 0, above: 1), per comparison, for the built-in model (USE-lite). */
export const COSINE_RANGES = {
  groundedness: [0.3, 0.8],
  context: [0.1, 0.6],
  answer: [0.1, 0.6],
} as const;

/** Share of lexical support in a score when vectors are there; the rest is semantic. */
export const LEXICAL_WEIGHT = { groundedness: 0.75, context: 0.5, answer: 0.5 } as const;

/** A missing name or number multiplies a sentence's groundedness by this (each, at most twice). */
export const MISSING_SALIENT_FACTOR = 0.5;

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
const to05 = (x: number) => Math.round(5 * clamp01(x));
const ranged = (cos: number, [lo, hi]: readonly [number, number]) => clamp01((cos - lo) / (hi - lo));

function cosine(a: number[] | null | undefined, b: number[] | null | undefined): number | null {
  if (!a || !b) return null;
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : null;
}

function mix(lexical: number | null, semantic: number | null, lexicalWeight: number): number {
  if (lexical === null && semantic === null) return 0;
  if (semantic === null) return lexical as number;
  if (lexical === null) return semantic;
  return lexicalWeight * lexical + (1 - lexicalWeight) * semantic;
}

/** Continuous 0–1 values behind the 0–5 scores (the benchmark reads these too). */
export interface RemiRaw {
  answer: { value: number; found: number; total: number; cosine: number | null };
  context: number[];
  groundedness: number[];
  sentences: string[];
}

export async function scoreRemiRaw(input: RemiInput, embed?: EmbedTexts): Promise<RemiRaw> {
  const context = input.context.slice(0, REMI_LIMITS.contextPieces);
  const answerSentences = input.noContext ? [] : sentences(input.answer, REMI_LIMITS.answerSentences);
  const texts = [input.question, input.answer, ...context.map((c) => c.text), ...answerSentences];
  let vectors: (number[] | null)[] | null = null;
  if (embed && texts.length > 0) {
    try {
      vectors = await embed(texts);
    } catch {
      vectors = null;
    }
  }
  const v = (i: number) => vectors?.[i] ?? null;
  const qWords = contentWords(input.question);
  const pieceStems = context.map((c) => stemSet(c.text));
  const allStems = new Set(pieceStems.flatMap((s) => [...s]));

  const contextValues = context.map((_, i) => {
    const lex = support(qWords, pieceStems[i] as Set<string>).share;
    const cos = cosine(v(0), v(2 + i));
    return mix(lex, cos === null ? null : ranged(cos, COSINE_RANGES.context), LEXICAL_WEIGHT.context);
  });

  const groundedness = answerSentences.map((s, i) => {
    const sup = support(contentWords(s), allStems);
    let best: number | null = null;
    for (let p = 0; p < context.length; p++) {
      const cos = cosine(v(2 + context.length + i), v(2 + p));
      if (cos !== null && (best === null || cos > best)) best = cos;
    }
    // A sentence of only stopwords ("Yes.") asserts nothing that could be checked: it is not held against the answer.
    if (sup.share === null) return 1;
    // The model may vouch for a paraphrase, never against words the context holds: the mix only raises lexical support.
    const value = Math.max(
      sup.share,
      mix(sup.share, best === null ? null : ranged(best, COSINE_RANGES.groundedness), LEXICAL_WEIGHT.groundedness),
    );
    return value * MISSING_SALIENT_FACTOR ** Math.min(2, sup.missingSalient.length);
  });

  const answerStems = stemSet(input.answer);
  const a = support(qWords, answerStems);
  const aCos = cosine(v(0), v(1));
  const answerValue =
    input.noContext || !input.answer.trim()
      ? 0
      : mix(a.share, aCos === null ? null : ranged(aCos, COSINE_RANGES.answer), LEXICAL_WEIGHT.answer);
  return {
    answer: { value: answerValue, found: a.found, total: a.total, cosine: aCos },
    context: contextValues,
    groundedness,
    sentences: answerSentences,
  };
}

export async function scoreRemi(input: RemiInput, embed?: EmbedTexts): Promise<RemiScores> {
  const raw = await scoreRemiRaw(input, embed);
  return {
    answer_relevance: { score: to05(raw.answer.value), reason: answerReason(input, raw) },
    context_relevance: raw.context.map(to05),
    groundedness: raw.groundedness.map(to05),
  };
}

function answerReason(input: RemiInput, raw: RemiRaw): string {
  if (input.noContext) return 'No context was found for the question, and the answer says so.';
  if (!input.answer.trim()) return 'No answer was given.';
  const parts = [
    raw.answer.total > 0
      ? `The answer takes up ${raw.answer.found} of the question's ${raw.answer.total} key terms`
      : 'The question has no key terms to look for',
  ];
  if (raw.answer.cosine !== null)
    parts.push(
      `its meaning is ${raw.answer.cosine >= 0.5 ? 'close to' : raw.answer.cosine >= 0.3 ? 'related to' : 'far from'} the question's (similarity ${raw.answer.cosine.toFixed(2)})`,
    );
  return `${parts.join('; ')}.`;
}
