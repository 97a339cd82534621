import { readAnswerJsonSchema, readReasoning, type AnswerJsonSchema, type AskRequest, type ReasoningOptions } from '@kb/contracts';
import { supportScore, type ChatTurn, type CitationMode } from './generation';
import { ragStrategiesOf, type RagStrategy } from './rag-strategies';

/** Context budget when the request sets none (tokens): enough for top_k paragraphs of a typical KB. */
const DEFAULT_CONTEXT_TOKENS = 12_000;

/** How /ask answers: everything of the request but its retrieval members. */
export interface AskOptions {
  citations: CitationMode;
  citationThreshold: number;
  chatHistory: ChatTurn[];
  extraContext: string[];
  prompt: { system?: string; user?: string; rephrase?: string };
  generativeModel?: string;
  seed?: number;
  maxAnswerTokens?: number;
  maxContextTokens: number;
  preferMarkdown?: boolean;
  generateAnswer: boolean;
  strategies: RagStrategy[];
  /** `prompt.rephrase` (or `rephrase_prompt`): instructions for rephrasing with a model. */
  rephrasePrompt?: string;
  answerJsonSchema?: AnswerJsonSchema;
  reasoning?: ReasoningOptions;
}

/** The answer members of an /ask body (API-MAP 2.4), checked by AskRequest, with their defaults. */
export function askOptionsOf(body: AskRequest): AskOptions {
  const c = body.citations;
  const citations: CitationMode = c === false || c === 'none' ? 'none' : c === 'llm_footnotes' ? 'llm_footnotes' : 'default';
  // `context` is the old name of `chat_history` (the DTO refuses both together).
  const chatHistory: ChatTurn[] = (body.chat_history ?? body.context ?? []).map((t) => ({ author: t.author, text: t.text }));
  const relevance = body.chat_history_relevance_threshold ?? undefined;
  const query = body.query ?? '';
  const keptHistory =
    relevance === undefined
      ? chatHistory
      : chatHistory.filter((t) => supportScore(query, t.text) >= relevance || supportScore(t.text, query) >= relevance);
  const prompt: AskOptions['prompt'] = {};
  const p = body.prompt;
  if (typeof p === 'string') prompt.user = p;
  else if (p) {
    if (typeof p.system === 'string') prompt.system = p.system;
    if (typeof p.user === 'string') prompt.user = p.user;
    if (typeof p.rephrase === 'string') prompt.rephrase = p.rephrase;
  }
  let maxAnswerTokens: number | undefined;
  let maxContextTokens = DEFAULT_CONTEXT_TOKENS;
  const mt = body.max_tokens;
  if (typeof mt === 'number') maxAnswerTokens = mt;
  else if (mt) {
    maxContextTokens = mt.context ?? maxContextTokens;
    maxAnswerTokens = mt.answer ?? undefined;
  }
  return {
    citations,
    citationThreshold: body.citation_threshold ?? 0.4,
    chatHistory: keptHistory,
    extraContext: body.extra_context ?? [],
    prompt,
    generativeModel: body.generative_model ?? undefined,
    seed: body.generative_model_seed ?? undefined,
    maxAnswerTokens,
    maxContextTokens,
    preferMarkdown: body.prefer_markdown ?? undefined,
    generateAnswer: body.generate_answer ?? true,
    strategies: ragStrategiesOf(body.rag_strategies),
    rephrasePrompt: prompt.rephrase,
    answerJsonSchema: readAnswerJsonSchema(body.answer_json_schema),
    reasoning: readReasoning(body.reasoning),
  };
}
