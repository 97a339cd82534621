import { REQUEST_LIMITS } from '@kb/contracts';
import { collectAnswer, EXTRACTIVE_MODEL, type ChatTurn, type Generator } from './generation';

/**
 * Query rephrasing (API-MAP 2.1 `rephrase`, 2.4 `prompt.rephrase`): the question rewritten as a
 * standalone search query, resolved against the chat history. A generative provider rewrites it
 * with the prompt below (or the caller's); without one, `rephraseByRules` does it without a model.
 */

export const REPHRASE_SYSTEM_PROMPT =
  'You rewrite the last question of a conversation as one standalone search query for a document search engine. ' +
  'Resolve pronouns and references to earlier turns, keep every name, number and term of the question, add nothing else. ' +
  'Reply with the rewritten query only, on one line, in the language of the question.';

export const DEFAULT_REPHRASE_PROMPT = 'Conversation so far:\n{chat_history}\n\nLast question: {question}\n\nStandalone search query:';

/** Function words: never salient, never replaced (English; other languages keep their question as it is). */
const STOPWORDS = new Set(
  (
    'a an the and or but if then so of to in on at by for from with about into over under as is are was were be been being am do does did ' +
    'has have had can could will would shall should may might must not no what which who whom whose when where why how ' +
    'i me my we us our you your it its they them their he him his she her this that these those there here ' +
    'some any all more most much many very just also too than please tell explain describe give show know'
  ).split(' '),
);
/** Joins two salient words into one phrase ("capital of France"). */
const CONNECTORS = new Set(['of']);
const PRONOUNS = new Set(['it', 'they', 'them', 'he', 'him', 'she', 'her', 'this', 'that', 'these', 'those']);
const POSSESSIVES = new Set(['its', 'their', 'his']);
/** Pronouns that are determiners when a salient word follows ("this book"). */
const DEMONSTRATIVES = new Set(['this', 'that', 'these', 'those']);
const FOLLOW_UP = /^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)[\s?.!]*$|^\s*and\s+(.+?)[\s?.!]*$/i;

interface Token {
  text: string;
  lower: string;
  start: number;
  end: number;
  salient: boolean;
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)) {
    const lower = m[0].toLowerCase();
    out.push({ text: m[0], lower, start: m.index, end: m.index + m[0].length, salient: !STOPWORDS.has(lower) });
  }
  return out;
}

/** Runs of salient tokens as [first, last] token indexes; with `connectors`, "of" may join two runs. */
function runs(ts: Token[], connectors: boolean): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  while (i < ts.length) {
    if (!ts[i]?.salient) {
      i++;
      continue;
    }
    let j = i;
    for (;;) {
      if (ts[j + 1]?.salient) j++;
      else if (connectors && CONNECTORS.has(ts[j + 1]?.lower ?? '') && ts[j + 2]?.salient) j += 2;
      else break;
    }
    out.push([i, j]);
    i = j + 1;
  }
  return out;
}

/** The question's salient noun phrase: its longest run of salient words (the last of equal ones), e.g. "capital of France". */
export function salientPhrase(question: string): string | undefined {
  const ts = tokens(question);
  let best: [number, number] | undefined;
  for (const run of runs(ts, true)) if (!best || run[1] - run[0] >= best[1] - best[0]) best = run;
  return best ? question.slice(ts[best[0]]?.start, ts[best[1]]?.end) : undefined;
}

/**
 * One question resolved against the previous (already resolved) one, without a model:
 * - a follow-up "and X?", "what about X?" takes the previous question with its last salient words replaced by X
 *   ("What is the capital of France?" + "And Germany?" → "What is the capital of Germany?");
 * - otherwise the first pronoun (it, they, this…; "its" → "<phrase>'s") becomes the previous question's salient phrase
 *   ("Who painted the Mona Lisa?" + "When was it stolen?" → "When was Mona Lisa stolen?");
 * - anything else is already standalone and kept as it is.
 */
export function resolveQuestion(question: string, previous: string | undefined): string {
  const q = question.trim();
  if (!previous?.trim()) return q;
  const follow = FOLLOW_UP.exec(q);
  const subject = follow?.[1] ?? follow?.[2];
  if (subject) {
    const ts = tokens(previous);
    const last = runs(ts, false).at(-1);
    if (!last) return `${previous.trim()} ${subject}`;
    return `${previous.slice(0, ts[last[0]]?.start)}${subject}${previous.slice(ts[last[1]]?.end)}`.trim();
  }
  const phrase = salientPhrase(previous);
  if (!phrase) return q;
  const ts = tokens(q);
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i] as Token;
    const demonstrativeUse = DEMONSTRATIVES.has(t.lower) && ts[i + 1]?.salient;
    if (PRONOUNS.has(t.lower) && !demonstrativeUse) return `${q.slice(0, t.start)}${phrase}${q.slice(t.end)}`;
    if (POSSESSIVES.has(t.lower)) return `${q.slice(0, t.start)}${phrase}'s${q.slice(t.end)}`;
  }
  return q;
}

/** The question made standalone by the rules of `resolveQuestion`, applied along the user's earlier questions in order. */
export function rephraseByRules(question: string, history: ChatTurn[]): string {
  let previous: string | undefined;
  for (const turn of history) if (turn.author === 'USER' && turn.text.trim()) previous = resolveQuestion(turn.text, previous);
  return resolveQuestion(question, previous);
}

/** The model's reply made a query: its first non-empty line, without quotes or a label, bounded. */
export function cleanRephrased(reply: string): string {
  const line =
    reply
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l) ?? '';
  return line
    .replace(/^(?:standalone (?:search )?query|query)\s*:\s*/i, '')
    .replace(/^["'“”]+|["'“”]+$/g, '')
    .trim()
    .slice(0, REQUEST_LIMITS.queryChars);
}

/**
 * The rephrased question: by the generator when it is a provider (its reply cleaned), by the
 * rules otherwise or when the reply is empty. Provider failures are thrown (GenerationError).
 */
export async function rephraseQuery(
  generator: Generator,
  req: { question: string; history: ChatTurn[]; prompt?: string; signal?: AbortSignal },
): Promise<{ query: string; by: 'model' | 'rules' }> {
  if (generator.model === EXTRACTIVE_MODEL) return { query: rephraseByRules(req.question, req.history), by: 'rules' };
  const { answer } = await collectAnswer(
    generator.generate({
      question: req.question,
      context: [],
      chatHistory: req.history,
      systemPrompt: REPHRASE_SYSTEM_PROMPT,
      userPrompt: req.prompt ?? DEFAULT_REPHRASE_PROMPT,
      citations: 'none',
      maxAnswerTokens: 256,
      signal: req.signal,
    }),
  );
  const query = cleanRephrased(answer);
  return query ? { query, by: 'model' } : { query: rephraseByRules(req.question, req.history), by: 'rules' };
}
