import {
  GenerationError,
  type ChatTurn,
  type GenerationContext,
  type GenerationEvent,
  type GenerationRequest,
  type Generator,
} from './generator';
import { contentTerms, estimateTokens, normalise, sentenceSpans } from './text';

export const EXTRACTIVE_MODEL = 'extractive';

export interface ExtractiveGeneratorOptions {
  /** Most sentences in an answer to an open question (default 3); factoid questions get one. */
  maxSentences?: number;
  /** A further sentence must score at least this share of the best one (default 0.6). */
  followRatio?: number;
}

/** A context sentence with its score; `start`/`end` are offsets into its passage's text. */
export interface ScoredSentence {
  key: string;
  rank: number;
  start: number;
  end: number;
  text: string;
  score: number;
  terms: Set<string>;
}

/**
 * The built-in generator, needing no network and no model: it answers with the context sentences
 * that best match the question, verbatim, so every answer is fully grounded. Context passages are
 * taken to be in rank order. Without context it answers nothing (an empty answer): the caller
 * reports "not enough context" before generating.
 */
export class ExtractiveGenerator implements Generator {
  readonly model = EXTRACTIVE_MODEL;

  constructor(private readonly options: ExtractiveGeneratorOptions = {}) {}

  generate(req: GenerationRequest): AsyncIterable<GenerationEvent> {
    return this.stream(req);
  }

  private async *stream(req: GenerationRequest): AsyncGenerator<GenerationEvent> {
    if (req.signal?.aborted) throw new GenerationError('aborted', 'extractive generation was aborted');
    const picked = selfContained(
      selectSentences(req.question, req.context, { ...this.options, chatHistory: req.chatHistory }),
      req.context,
    );
    let answer = '';
    for (const [i, sentence] of picked.entries()) {
      // Sentences are never cut: the best one is always given, further ones only within max tokens.
      if (i > 0 && req.maxAnswerTokens && estimateTokens(`${answer} ${sentence.text}`) > req.maxAnswerTokens) break;
      // Yield between sentences so a slow consumer and an abort behave as with a provider.
      await Promise.resolve();
      if (req.signal?.aborted) throw new GenerationError('aborted', 'extractive generation was aborted');
      const text = answer ? ` ${sentence.text}` : sentence.text;
      answer += text;
      yield { type: 'text', text };
    }
    const input = estimateTokens(req.question) + req.context.reduce((sum, c) => sum + estimateTokens(c.text), 0);
    yield { type: 'metadata', inputTokens: input, outputTokens: estimateTokens(answer), stopReason: 'stop' };
  }
}

/** Questions whose answer is a name, a date, a number or yes/no: one sentence answers them best. */
const FACTOID =
  /\b(?:who|whom|whose|what|which|when|where|how (?:many|much|old|long|far|tall|big|large|often))\b|^(?:name|is|are|was|were|do|does|did|can|could|has|have|had)\b/;
/** Questions asking for an explanation, which several sentences answer better. */
const OPEN = /\b(?:why|explain|describe|summari[sz]e|compare)\b|^how (?:do|does|did|can|could|is|are|was|were|to|should)\b/;
const PRONOUN_START = /^(?:he|she|it|they|his|her|its|their|this|these)\b/i;
const WANTS_NUMBER = /\b(?:when|year|date|how (?:many|much|old|long|far|tall|big|large|often)|age|number|population|century|decade)\b/;
const WANTS_NAME =
  /\b(?:who|whom|whose|where|which|what (?:city|country|state|town|company|team|band|film|movie|book|album|language|university|county|river|name))\b/;

/** Weights of the sentence score; exposed for the benchmark that tuned them. */
export const EXTRACTIVE_TUNING = {
  passageShare: 0.35,
  bigramBonus: 0.15,
  numberBonus: 0.1,
  nameBonus: 0.05,
  rankDiscount: 0.08,
  longSentenceWords: 40,
  bridgeWeight: 1,
  secondHopMin: 0.35,
  secondHopUncovered: 0.2,
};

/**
 * Scores every context sentence against the question and returns the answer sentences, best
 * first. A sentence scores by the IDF-weighted share of question terms it contains (IDF over the
 * context's sentences, so terms every passage repeats count little), plus the share its whole
 * passage contains (an answer often sits in a sentence that names its subject by pronoun), a
 * bonus for question bigrams kept in order and for holding the kind of answer the question asks
 * for (a number for "when", a name for "who"); then it is discounted by passage rank and for being
 * very short or very long.
 *
 * Multi-hop questions ("the director of X was born where?") are matched best by a sentence about
 * X, which names the director but not the answer. When the best sentence leaves part of the
 * question uncovered and names someone the question does not, a second hop scores the sentences
 * again for the uncovered terms plus those names, and answers with the second-hop sentence when
 * it matches well enough.
 */
export function selectSentences(
  question: string,
  context: GenerationContext[],
  options: ExtractiveGeneratorOptions & { chatHistory?: ChatTurn[]; tuning?: Partial<typeof EXTRACTIVE_TUNING> } = {},
): ScoredSentence[] {
  const tuning = { ...EXTRACTIVE_TUNING, ...options.tuning };
  const candidates = sentencesOf(context);
  if (!candidates.length) return [];
  const weights = questionWeights(question, options.chatHistory ?? []);
  const df = new Map<string, number>();
  for (const c of candidates) for (const t of c.terms) df.set(t, (df.get(t) ?? 0) + 1);
  const idf = (t: string): number => Math.log(1 + candidates.length / Math.max(df.get(t) ?? 0, 0.5));
  const passageTerms = new Map<number, Set<string>>();
  for (const c of candidates) {
    const set = passageTerms.get(c.rank) ?? new Set<string>();
    c.terms.forEach((t) => set.add(t));
    passageTerms.set(c.rank, set);
  }
  const q = normalise(question).trim();
  const questionBigrams = bigrams(contentTerms(question));
  const questionWords = new Set(normalise(question).match(/[\p{L}\p{N}]+/gu) ?? []);
  const wantsNumber = WANTS_NUMBER.test(q);
  const wantsName = WANTS_NAME.test(q);

  const score = (c: ScoredSentence, w: Map<string, number>): number => {
    const mass = [...w].reduce((sum, [t, x]) => sum + x * idf(t), 0) || 1;
    const coverage = (terms: Set<string>): number => [...w].reduce((sum, [t, x]) => sum + (terms.has(t) ? x * idf(t) : 0), 0) / mass;
    const own = coverage(c.terms);
    const passage = coverage(passageTerms.get(c.rank) as Set<string>);
    if (own <= 0 && passage <= 0) return 0;
    const sentenceBigrams = bigrams(contentTerms(c.text));
    const bigramShare = questionBigrams.size ? [...questionBigrams].filter((b) => sentenceBigrams.has(b)).length / questionBigrams.size : 0;
    let bonus = tuning.bigramBonus * bigramShare;
    if (wantsNumber && hasNovelNumber(c.text, questionWords)) bonus += tuning.numberBonus;
    if (wantsName && hasNovelName(c.text, questionWords)) bonus += tuning.nameBonus;
    const words = c.text.split(/\s+/).length;
    const lengthFactor = words < 4 ? 0.5 : words > tuning.longSentenceWords ? Math.sqrt(tuning.longSentenceWords / words) : 1;
    const base = (1 - tuning.passageShare) * own + tuning.passageShare * passage + bonus;
    return (base * lengthFactor) / (1 + tuning.rankDiscount * c.rank);
  };
  const rank = (w: Map<string, number>): ScoredSentence[] => {
    for (const c of candidates) c.score = score(c, w);
    return [...candidates].sort((a, b) => b.score - a.score || a.rank - b.rank || a.start - b.start);
  };

  const ranked = rank(weights);
  const top = ranked[0] as ScoredSentence;
  // No overlap at all: the retrieval still ranked the first passage best, so its opening sentence is the safest answer.
  if (top.score <= 0)
    return [candidates.find((c) => c.rank === candidates[0]?.rank && c.text.split(/\s+/).length >= 4) ?? (candidates[0] as ScoredSentence)];

  const factoid = FACTOID.test(q) && !OPEN.test(q);
  if (factoid) return [secondHop(top, weights, idf, questionWords, rank, passageTerms, tuning) ?? top];

  const picked = [top];
  const covered = new Set([...top.terms].filter((t) => weights.has(t)));
  for (const c of ranked.slice(1)) {
    if (picked.length >= Math.max(1, options.maxSentences ?? 3) || c.score < (options.followRatio ?? 0.6) * top.score) break;
    const adds = [...c.terms].filter((t) => weights.has(t) && !covered.has(t));
    if (!adds.length || picked.some((p) => jaccard(p.terms, c.terms) > 0.8)) continue;
    adds.forEach((t) => covered.add(t));
    picked.push(c);
  }
  return picked;
}

function secondHop(
  top: ScoredSentence,
  weights: Map<string, number>,
  idf: (t: string) => number,
  questionWords: Set<string>,
  rank: (w: Map<string, number>) => ScoredSentence[],
  passageTerms: Map<number, Set<string>>,
  tuning: typeof EXTRACTIVE_TUNING,
): ScoredSentence | null {
  const total = [...weights].reduce((sum, [t, w]) => sum + w * idf(t), 0);
  const uncovered = new Map([...weights].filter(([t]) => !top.terms.has(t)));
  const uncoveredShare = [...uncovered].reduce((sum, [t, w]) => sum + w * idf(t), 0) / (total || 1);
  const bridge = novelNames(top.text, questionWords);
  if (uncoveredShare < tuning.secondHopUncovered || !bridge.size) return null;
  const hop = new Map(uncovered);
  for (const t of bridge) if (!weights.has(t)) hop.set(t, tuning.bridgeWeight);
  // The answer sentence names the bridge, or refers to it by pronoun ("He lives in…") in a passage that names it.
  const names = (c: ScoredSentence): boolean =>
    [...bridge].some((t) => c.terms.has(t)) || (PRONOUN_START.test(c.text) && [...bridge].some((t) => passageTerms.get(c.rank)?.has(t)));
  const best = rank(hop).find((c) => c !== top && names(c) && [...uncovered.keys()].some((t) => c.terms.has(t)));
  return best && best.score >= tuning.secondHopMin ? best : null;
}

/**
 * An answer sentence that opens with a pronoun ("It flows north through Egypt…") does not say what
 * it is about: it is given together with the sentence before it in its passage ("The Nile is the
 * longest river in Africa. It flows north…"), as one verbatim span of that passage, so it stays
 * cited. Not when that sentence is in the answer already, nor for a passage's first sentence.
 */
export function selfContained(picked: ScoredSentence[], context: GenerationContext[]): ScoredSentence[] {
  const taken = new Set(picked.map((p) => `${p.rank}:${p.start}`));
  return picked.map((p) => {
    if (!PRONOUN_START.test(p.text)) return p;
    const passage = context[p.rank]?.text ?? '';
    const spans = sentenceSpans(passage);
    const at = spans.findIndex((span) => span.start === p.start);
    const before = at > 0 ? spans[at - 1] : undefined;
    if (!before || taken.has(`${p.rank}:${before.start}`)) return p;
    return { ...p, start: before.start, text: passage.slice(before.start, p.end) };
  });
}

/** Every sentence of the context once: a passage repeated by retrieval adds nothing. */
function sentencesOf(context: GenerationContext[]): ScoredSentence[] {
  const seen = new Set<string>();
  const out: ScoredSentence[] = [];
  context.forEach((item, rank) => {
    for (const span of sentenceSpans(item.text)) {
      const text = item.text.slice(span.start, span.end);
      const fingerprint = normalise(text).replace(/\s+/g, ' ');
      if (seen.has(fingerprint)) continue;
      seen.add(fingerprint);
      out.push({ key: item.key, rank, start: span.start, end: span.end, text, score: 0, terms: new Set(contentTerms(text)) });
    }
  });
  return out;
}

/** Question terms weigh 1; terms of the last user turns weigh 0.2, so a follow-up ("and when?") keeps its subject. */
function questionWeights(question: string, history: ChatTurn[]): Map<string, number> {
  const weights = new Map<string, number>();
  for (const turn of history.filter((t) => t.author === 'USER').slice(-2)) for (const t of contentTerms(turn.text)) weights.set(t, 0.2);
  for (const t of contentTerms(question)) weights.set(t, 1);
  return weights;
}

function bigrams(terms: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i < terms.length; i++) out.add(`${terms[i - 1]} ${terms[i]}`);
  return out;
}

function hasNovelNumber(text: string, questionWords: Set<string>): boolean {
  return (text.match(/\d+/g) ?? []).some((num) => !questionWords.has(num));
}

/** A capitalised word that is not the sentence's first and not in the question: a candidate name. */
function hasNovelName(text: string, questionWords: Set<string>): boolean {
  return novelNames(text, questionWords).size > 0;
}

/** Content terms of the capitalised words of `text` (its first word aside) that the question lacks. */
function novelNames(text: string, questionWords: Set<string>): Set<string> {
  const words = text.match(/[\p{L}][\p{L}'’-]*/gu) ?? [];
  const names = words.slice(1).filter((w) => /^\p{Lu}/u.test(w) && !questionWords.has(normalise(w)));
  return new Set(contentTerms(names.join(' ')));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  a.forEach((t) => (shared += b.has(t) ? 1 : 0));
  const union = a.size + b.size - shared;
  return union ? shared / union : 1;
}
