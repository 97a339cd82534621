import type { ChatTurn, GenerationContext, GenerationRequest } from './generator';
import { estimateTokens, sentenceSpans } from './text';

export { estimateTokens } from './text';

export interface BuiltPrompt {
  system: string;
  user: string;
  /** Turns to send as earlier chat messages; empty when a template placed `{chat_history}` itself. */
  history: ChatTurn[];
  /** Footnote id → context key, for `llm_footnotes` (`{"1": "<rid>/t/body/0-120"}`); empty otherwise. */
  footnotes: Record<string, string>;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You answer questions using only the numbered context passages you are given. ' +
  'If the passages do not contain the answer, say that you do not have enough information to answer. ' +
  'Do not use outside knowledge. Answer in the language of the question, briefly and precisely.';

export const DEFAULT_USER_PROMPT = 'Context passages:\n\n{context}\n\nQuestion: {question}';

const FOOTNOTE_INSTRUCTIONS =
  'After each statement, cite the passages that support it with their numbers in square brackets, like [1] or [2][3]. ' +
  'Cite only numbers of passages you were given.';

const PLACEHOLDER = /\{(context|question|chat_history)\}/g;

/**
 * The system and user messages for a RAG answer. Context passages are numbered in rank order
 * (`[1] text`). Custom templates replace the defaults and have `{context}`, `{question}` and
 * `{chat_history}` substituted in one pass, so a question containing "{context}" is not expanded.
 * A template pair that leaves out `{context}` or `{question}` gets the missing part appended to the
 * user message: a grounded answer needs both.
 */
export function buildPrompt(
  req: Pick<GenerationRequest, 'question' | 'context' | 'chatHistory' | 'systemPrompt' | 'userPrompt' | 'preferMarkdown' | 'citations'>,
): BuiltPrompt {
  const footnotes: Record<string, string> = {};
  const blocks = req.context.map((c, i) => {
    if (req.citations === 'llm_footnotes') footnotes[String(i + 1)] = c.key;
    return `[${i + 1}] ${c.text.trim()}`;
  });
  const values = { context: blocks.join('\n\n'), question: req.question.trim(), chat_history: formatHistory(req.chatHistory) };
  const systemTemplate = req.systemPrompt?.trim() ? req.systemPrompt : DEFAULT_SYSTEM_PROMPT;
  // A custom system prompt that places the context itself leaves the default user message just the question.
  const userTemplate = req.userPrompt?.trim()
    ? req.userPrompt
    : systemTemplate.includes('{context}')
      ? 'Question: {question}'
      : DEFAULT_USER_PROMPT;
  const uses = (name: string): boolean => systemTemplate.includes(`{${name}}`) || userTemplate.includes(`{${name}}`);

  let user = substitute(userTemplate, values);
  if (!uses('context') && blocks.length) user = `Context passages:\n\n${values.context}\n\n${user}`;
  if (!uses('question')) user = `${user}\n\nQuestion: ${values.question}`;

  const instructions = [substitute(systemTemplate, values)];
  instructions.push(req.preferMarkdown ? 'Format the answer in Markdown.' : 'Answer in plain text, without Markdown.');
  if (req.citations === 'llm_footnotes') instructions.push(FOOTNOTE_INSTRUCTIONS);
  return {
    system: instructions.join('\n\n'),
    user,
    history: uses('chat_history') ? [] : req.chatHistory.filter((t) => t.text.trim()),
    footnotes,
  };
}

/** Replaces `{context}`, `{question}` and `{chat_history}`; other braces are left alone. */
export function substitute(template: string, values: { context: string; question: string; chat_history: string }): string {
  return template.replace(PLACEHOLDER, (_, name: keyof typeof values) => values[name]);
}

function formatHistory(history: ChatTurn[]): string {
  return history.map((t) => `${t.author === 'USER' ? 'User' : 'Assistant'}: ${t.text.trim()}`).join('\n');
}

/**
 * Keeps context passages in rank order while their estimated tokens fit `budgetTokens`; the first
 * passage that does not fit is cut after its last whole sentence that does (or dropped when not
 * even its first sentence fits), and nothing after it is kept. The cut text is a verbatim prefix
 * of the passage, so citations into it stay valid.
 */
export function trimContext(context: GenerationContext[], budgetTokens: number): GenerationContext[] {
  const out: GenerationContext[] = [];
  let left = Math.max(0, budgetTokens);
  for (const item of context) {
    const cost = estimateTokens(item.text);
    if (cost <= left) {
      out.push(item);
      left -= cost;
      continue;
    }
    let end = 0;
    for (const span of sentenceSpans(item.text)) {
      if (estimateTokens(item.text.slice(0, span.end)) > left) break;
      end = span.end;
    }
    if (end > 0) out.push({ key: item.key, text: item.text.slice(0, end) });
    break;
  }
  return out;
}

/** Room left for the answer, the instructions and the chat turns when a model caps its input. */
const PROMPT_OVERHEAD_TOKENS = 200;

/** The request with its context trimmed to what a model with `maxInputTokens` can read, alongside the rest of the prompt. */
export function fitContext<T extends GenerationRequest>(req: T, maxInputTokens: number | undefined): T {
  if (!maxInputTokens) return req;
  const fixed =
    estimateTokens(req.question) +
    estimateTokens(req.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) +
    estimateTokens(req.userPrompt ?? DEFAULT_USER_PROMPT) +
    req.chatHistory.reduce((sum, t) => sum + estimateTokens(t.text) + 4, 0) +
    req.context.length * 4 +
    PROMPT_OVERHEAD_TOKENS;
  return { ...req, context: trimContext(req.context, maxInputTokens - fixed) };
}
