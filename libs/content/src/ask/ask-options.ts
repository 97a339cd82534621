import {
  answerJsonSchemaIssues,
  readAnswerJsonSchema,
  readReasoning,
  reasoningIssues,
  rephrasePromptIssues,
  type AnswerJsonSchema,
  type ReasoningOptions,
} from '@kb/contracts';
import { REQUEST_LIMITS } from '../search/query/request-limits';
import { isObject, type RequestReader } from '../search/query/request-reader';
import { supportScore, type ChatTurn, type CitationMode } from './generation';
import { readRagStrategies, type RagStrategy } from './rag-strategies';

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

/** Reads the answer members of an /ask body (API-MAP 2.4); every problem joins the reader's issues. */
export function readAskOptions(r: RequestReader): AskOptions {
  const citationsRaw = r.raw('citations');
  let citations: CitationMode = 'default';
  if (citationsRaw === false || citationsRaw === 'none') citations = 'none';
  else if (citationsRaw === 'llm_footnotes') citations = 'llm_footnotes';
  else if (citationsRaw !== undefined && citationsRaw !== null && citationsRaw !== true && citationsRaw !== 'default') {
    r.issue('citations', "Input should be true, false, 'none', 'default' or 'llm_footnotes'", 'enum');
  }
  const threshold = r.raw('citation_threshold');
  const citationThreshold = r.number('citation_threshold', threshold, { min: 0, max: 1 }) ?? 0.4;
  const history = r.has('chat_history') ? r.raw('chat_history') : r.raw('context');
  if (r.has('chat_history') && r.has('context'))
    r.issue('context', 'context is the old name of chat_history: send one of them', 'value_error');
  const chatHistory: ChatTurn[] = [];
  if (history !== undefined && history !== null) {
    const name = r.has('chat_history') ? 'chat_history' : 'context';
    if (!Array.isArray(history)) r.issue(name, 'Input should be a valid list', 'list_type');
    else if (history.length > REQUEST_LIMITS.chatTurns)
      r.issue(name, `List should have at most ${REQUEST_LIMITS.chatTurns} items`, 'too_long');
    else {
      history.forEach((t, i) => {
        if (!isObject(t) || (t['author'] !== 'USER' && t['author'] !== 'NUCLIA') || typeof t['text'] !== 'string') {
          r.issue([name, i], "Input should be {author: 'USER'|'NUCLIA', text}", 'model_type');
        } else if (t['text'].length > REQUEST_LIMITS.passageChars) {
          r.issue([name, i, 'text'], `String should have at most ${REQUEST_LIMITS.passageChars} characters`, 'string_too_long');
        } else chatHistory.push({ author: t['author'], text: t['text'] });
      });
    }
  }
  const relevance = r.number('chat_history_relevance_threshold', r.raw('chat_history_relevance_threshold'), { min: 0, max: 1 });
  const query = typeof r.body['query'] === 'string' ? r.body['query'] : '';
  const keptHistory =
    relevance === undefined
      ? chatHistory
      : chatHistory.filter((t) => supportScore(query, t.text) >= relevance || supportScore(t.text, query) >= relevance);
  const extraContext = r.stringList('extra_context', { max: REQUEST_LIMITS.passageChars }) ?? [];
  const prompt: AskOptions['prompt'] = {};
  const p = r.raw('prompt');
  if (typeof p === 'string') prompt.user = p;
  else if (isObject(p)) {
    for (const k of Object.keys(p)) {
      if (k !== 'system' && k !== 'user' && k !== 'rephrase') r.issue(['prompt', k], 'Extra inputs are not permitted', 'extra_forbidden');
      else if (p[k] !== null && p[k] !== undefined && typeof p[k] !== 'string')
        r.issue(['prompt', k], 'Input should be a valid string', 'string_type');
    }
    if (typeof p['system'] === 'string') prompt.system = p['system'];
    if (typeof p['user'] === 'string') prompt.user = p['user'];
    if (typeof p['rephrase'] === 'string') {
      const issues = rephrasePromptIssues(p['rephrase'], [...r.loc, 'prompt', 'rephrase']);
      r.issues.push(...issues);
      if (!issues.length) prompt.rephrase = p['rephrase'];
    }
  } else if (p !== undefined && p !== null) r.issue('prompt', 'Input should be a string or {system, user}', 'model_type');
  const generativeModel = r.optionalString('generative_model');
  const seedRaw = r.raw('generative_model_seed');
  const seed =
    seedRaw === undefined || seedRaw === null
      ? undefined
      : Number.isInteger(seedRaw)
        ? (seedRaw as number)
        : (r.issue('generative_model_seed', 'Input should be a valid integer', 'int_type'), undefined);
  let maxAnswerTokens: number | undefined;
  let maxContextTokens = DEFAULT_CONTEXT_TOKENS;
  const mt = r.raw('max_tokens');
  if (typeof mt === 'number') {
    if (!Number.isInteger(mt) || mt < 1) r.issue('max_tokens', 'Input should be a positive integer', 'int_type');
    else maxAnswerTokens = mt;
  } else if (isObject(mt)) {
    for (const k of Object.keys(mt))
      if (k !== 'context' && k !== 'answer') r.issue(['max_tokens', k], 'Extra inputs are not permitted', 'extra_forbidden');
    const c = mt['context'];
    const a = mt['answer'];
    if (c !== undefined && c !== null) {
      if (!Number.isInteger(c) || (c as number) < 1) r.issue(['max_tokens', 'context'], 'Input should be a positive integer', 'int_type');
      else maxContextTokens = c as number;
    }
    if (a !== undefined && a !== null) {
      if (!Number.isInteger(a) || (a as number) < 1) r.issue(['max_tokens', 'answer'], 'Input should be a positive integer', 'int_type');
      else maxAnswerTokens = a as number;
    }
  } else if (mt !== undefined && mt !== null) r.issue('max_tokens', 'Input should be an integer or {context, answer}', 'model_type');
  const preferRaw = r.raw('prefer_markdown');
  if (preferRaw !== undefined && preferRaw !== null && typeof preferRaw !== 'boolean')
    r.issue('prefer_markdown', 'Input should be a valid boolean', 'bool_type');
  const generateAnswer = r.bool('generate_answer', true);
  const strategies = readRagStrategies(r);
  const empty = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
  r.unsupported('extra_context_images', 'images are not sent to generative models', empty);
  r.unsupported('rag_images_strategies', 'image strategies are not available', empty);
  const schemaRaw = r.raw('answer_json_schema');
  const schemaIssues = answerJsonSchemaIssues(schemaRaw, [...r.loc, 'answer_json_schema']);
  r.issues.push(...schemaIssues);
  const reasoningRaw = r.raw('reasoning');
  const reasoningProblems = reasoningIssues(reasoningRaw, [...r.loc, 'reasoning']);
  r.issues.push(...reasoningProblems);
  return {
    citations,
    citationThreshold,
    chatHistory: keptHistory,
    extraContext,
    prompt,
    generativeModel,
    seed,
    maxAnswerTokens,
    maxContextTokens,
    preferMarkdown: typeof preferRaw === 'boolean' ? preferRaw : undefined,
    generateAnswer,
    strategies,
    rephrasePrompt: prompt.rephrase,
    answerJsonSchema: schemaIssues.length ? undefined : readAnswerJsonSchema(schemaRaw),
    reasoning: reasoningProblems.length ? undefined : readReasoning(reasoningRaw),
  };
}
