import { Inject, Injectable } from '@nestjs/common';
import {
  AccountsSubjects,
  BUILTIN_SEMANTIC_MODEL,
  type PredictGenerateItem,
  type PredictGenerateRequest,
  type PredictKbRef,
  type PredictModelsDto,
  type PredictRerankRequest,
  type PredictRerankResponse,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { createGenerator, EXTRACTIVE_MODEL, type Generator } from '../ask/generation';
import { lexicalFeatures } from '../search/query/rerank';
import { extractiveSummary, offlineRephrase } from './offline';

/** System prompts of the generations that are not answers (the answer's is /ask's default, or the caller's). */
const SUMMARIZE_SYSTEM =
  'Summarize the text given as context in a few sentences, in the language of the text. Use only what the text says.';
const REPHRASE_SYSTEM =
  'Rewrite the last question of the user as one standalone question that can be understood without the conversation, ' +
  'in the language of the question. Answer with the rewritten question only.\n\nConversation:\n{chat_history}';

/** Weights of the standalone rerank score: all of the question present, close together, in order. */
const RERANK_WEIGHTS = { coverage: 0.6, proximity: 0.2, order: 0.2 } as const;

/**
 * The content side of the predict API (docs/predict.md): generations with the KB's generative model
 * (the same guarded generators as /ask, built-in extractive one by default), the built-in lexical
 * reranker's scores, and the names of the KB's models. Without a KB, the built-in models answer.
 */
@Injectable()
export class PredictService {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  async *generate(req: PredictGenerateRequest, signal?: AbortSignal): AsyncGenerator<PredictGenerateItem> {
    const config = await this.config(req.kbid, signal);
    const generator = createGenerator({
      generative_model: req.generative_model ?? (config['generative_model'] as string | undefined),
      user_keys: (config['user_keys'] as Record<string, Record<string, unknown>> | null | undefined) ?? null,
    });
    if (generator.model === EXTRACTIVE_MODEL && req.task !== 'chat') {
      // No model: the summary is the text's most central sentences, the rephrased question is
      // resolved against the conversation's last question (docs/predict.md).
      const text =
        req.task === 'summarize'
          ? extractiveSummary(req.context.map((c) => c.text).join('\n\n'), req.max_tokens)
          : offlineRephrase(req.question, req.chat_history);
      if (text) yield { type: 'text', text };
      yield { type: 'done', model: generator.model };
      return;
    }
    // The extractive model answers from context only: a chat without context (OpenAI-compatible
    // chats) answers from its system messages.
    const context =
      generator.model === EXTRACTIVE_MODEL && req.context.length === 0 && req.system?.trim()
        ? [{ key: 'system', text: req.system }]
        : req.context;
    yield* this.run(generator, { ...req, context }, signal);
  }

  private async *run(generator: Generator, req: PredictGenerateRequest, signal?: AbortSignal): AsyncGenerator<PredictGenerateItem> {
    const systemPrompt = req.task === 'summarize' ? SUMMARIZE_SYSTEM : req.task === 'rephrase' ? REPHRASE_SYSTEM : req.system;
    const events = generator.generate({
      question: req.task === 'summarize' ? 'Summarize the context.' : req.question,
      context: req.context,
      chatHistory: req.chat_history,
      systemPrompt,
      userPrompt: req.task === 'chat' ? req.user_prompt : undefined,
      maxAnswerTokens: req.max_tokens,
      preferMarkdown: req.prefer_markdown ?? false,
      citations: 'none',
      seed: req.seed,
      signal,
    });
    let done: PredictGenerateItem = { type: 'done', model: generator.model };
    for await (const event of events) {
      if (event.type === 'metadata')
        done = {
          type: 'done',
          model: generator.model,
          input_tokens: event.inputTokens,
          output_tokens: event.outputTokens,
          stop_reason: event.stopReason,
        };
      // No answer schema is asked for here, so a structured (`json`) answer never comes.
      else if (event.type === 'text' || event.type === 'reasoning') yield event;
    }
    yield done;
  }

  /** Scores in [0, 1] of each context piece for the question (the built-in lexical reranker's features). */
  rerank(req: PredictRerankRequest): PredictRerankResponse {
    const scores: Record<string, number> = {};
    for (const [id, text] of Object.entries(req.context)) {
      const f = lexicalFeatures(req.question, text, '');
      scores[id] =
        Math.round((RERANK_WEIGHTS.coverage * f.coverage + RERANK_WEIGHTS.proximity * f.proximity + RERANK_WEIGHTS.order * f.order) * 1e6) /
        1e6;
    }
    return { context_scores: scores };
  }

  async models(req: PredictKbRef): Promise<PredictModelsDto> {
    const config = await this.config(req.kbid);
    const semantic = Array.isArray(config['semantic_models'])
      ? (config['semantic_models'] as unknown[]).filter((m): m is string => typeof m === 'string')
      : [];
    const dflt =
      typeof config['default_semantic_model'] === 'string' ? config['default_semantic_model'] : (semantic[0] ?? BUILTIN_SEMANTIC_MODEL);
    const generative =
      typeof config['generative_model'] === 'string' && config['generative_model'] ? config['generative_model'] : EXTRACTIVE_MODEL;
    // The built-in model, and the configured one under the entry of `user_keys` that serves it (the
    // entry createGenerator picks); entries' other members are not listed (an OpenAI-compatible entry
    // may configure an embedder).
    const providers: Record<string, string[]> = { builtin: [EXTRACTIVE_MODEL] };
    if (generative !== EXTRACTIVE_MODEL) {
      const keys =
        typeof config['user_keys'] === 'object' && config['user_keys'] !== null ? (config['user_keys'] as Record<string, unknown>) : {};
      const order = /^claude|^anthropic$/i.test(generative)
        ? ['anthropic']
        : /azure/i.test(generative)
          ? ['azure_openai', 'azure', 'openai_compat', 'openai_compatible']
          : ['openai_compat', 'openai_compatible', 'openai', 'azure_openai'];
      const owner = order.find((p) => keys[p] !== undefined && keys[p] !== null);
      if (owner) providers[owner] = [generative];
    }
    return { generative, semantic: [...new Set([dflt, ...semantic])], generative_providers: providers };
  }

  /** The KB's learning configuration (with its provider keys: they stay in this service); none without a KB. */
  private async config(kbid: string | undefined, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (!kbid) return {};
    return this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbid }, { signal });
  }
}
