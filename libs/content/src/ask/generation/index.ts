export * from './generator';
export {
  buildPrompt,
  substitute,
  trimContext,
  fitContext,
  estimateTokens,
  DEFAULT_SYSTEM_PROMPT,
  DEFAULT_USER_PROMPT,
  type BuiltPrompt,
} from './prompt';
export {
  computeCitations,
  footnoteCitations,
  stripFootnotes,
  groundedness,
  supportScore,
  DEFAULT_CITATION_THRESHOLD,
  DEFAULT_GROUNDEDNESS_THRESHOLD,
  type Citations,
} from './citations';
export {
  ExtractiveGenerator,
  EXTRACTIVE_MODEL,
  selectSentences,
  type ExtractiveGeneratorOptions,
  type ScoredSentence,
} from './extractive.generator';
export { OpenAiCompatibleGenerator, type OpenAiCompatibleGeneratorOptions } from './openai-compatible.generator';
export { AnthropicGenerator, ANTHROPIC_URL, ANTHROPIC_VERSION, type AnthropicGeneratorOptions } from './anthropic.generator';
export {
  createGenerator,
  OPENAI_URL,
  AZURE_OPENAI_API_VERSION,
  type GenerativeModelConfig,
  type CreateGeneratorOptions,
} from './create-generator';
export { sentenceSpans, splitSentences, type Span } from './text';
