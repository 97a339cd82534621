import { Inject, Injectable } from '@nestjs/common';
import {
  AccountsSubjects,
  fitJudgeContext,
  REMI_JUDGE_LIMITS,
  type RemiJudgeError,
  type RemiJudgeRequest,
  type RemiJudgeResponse,
} from '@kb/contracts';
import { Gate } from '@kb/platform/concurrency';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { collectAnswer, createGenerator, EXTRACTIVE_MODEL, GenerationError, type Generator } from './generation';
import { JUDGE_SCHEMA, JUDGE_SYSTEM_PROMPT, JUDGE_USER_PROMPT, judgeMaxTokens, judgeTask, parseJudgement } from './remi-judge';

/** Judge calls a content process runs at once; later ones wait their turn (the caller's deadline still runs). */
export const REMI_JUDGE_CONCURRENCY = 4;

/**
 * The REMi LLM judge (`content.remi.judge`, docs/remi.md): the reporting service asks content to
 * grade one `/ask` answer with the KB's own generative model. It runs in content because the
 * providers, and the keys of `user_keys`, are served by content's generation layer for /ask: the
 * keys never reach reporting. A KB without a provider says so (`no_provider`); a provider failure
 * or an answer that is not the JSON asked for is reported as `failed` with its kind only (the
 * provider's message may quote the request), and the caller scores the answer offline.
 */
@Injectable()
export class RemiJudgeService {
  /** At most REMI_JUDGE_CONCURRENCY judge calls at once, the others in order. */
  private readonly calls = new Gate(REMI_JUDGE_CONCURRENCY);

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async judge(req: RemiJudgeRequest, signal?: AbortSignal): Promise<RemiJudgeResponse> {
    let config: Record<string, unknown>;
    try {
      config = await this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: req.kbid }, { signal });
    } catch {
      return { outcome: 'failed', model: null, error: 'unavailable' };
    }
    const named = typeof config['generative_model'] === 'string' ? config['generative_model'].trim() : '';
    if (!named || named === EXTRACTIVE_MODEL) return { outcome: 'no_provider' };
    let generator: Generator;
    try {
      generator = createGenerator({
        generative_model: named,
        user_keys: (config['user_keys'] as Record<string, Record<string, unknown>> | null | undefined) ?? null,
      });
    } catch {
      this.logger.warn({ kbid: req.kbid }, 'REMi judge skipped: the generative model configuration is unusable');
      return { outcome: 'failed', model: null, error: 'config' };
    }
    const model = generator.model.slice(0, 200);
    const context = fitJudgeContext(req.context);
    const sentences = req.sentences.slice(0, REMI_JUDGE_LIMITS.sentences).map((s) => s.slice(0, REMI_JUDGE_LIMITS.sentenceChars));
    const question = req.question.slice(0, REMI_JUDGE_LIMITS.questionChars);
    let text: string;
    try {
      const out = await this.calls.run(() =>
        collectAnswer(
          generator.generate({
            question: judgeTask({ question, sentences, context }),
            context,
            chatHistory: [],
            systemPrompt: JUDGE_SYSTEM_PROMPT,
            userPrompt: JUDGE_USER_PROMPT,
            citations: 'none',
            maxAnswerTokens: judgeMaxTokens(context.length, sentences.length),
            answerJsonSchema: generator.structuredAnswers ? JUDGE_SCHEMA : undefined,
            signal,
          }),
        ),
      );
      text = out.json || out.answer;
    } catch (err) {
      const kind: RemiJudgeError = err instanceof GenerationError ? err.kind : 'provider';
      // The kind and HTTP status only: a provider's message can quote the request.
      this.logger.warn(
        { kbid: req.kbid, model, kind, status: err instanceof GenerationError ? err.status : undefined },
        'REMi judge failed; the answer is scored offline',
      );
      return { outcome: 'failed', model, error: kind };
    }
    const judged = parseJudgement(text, context.length, sentences.length);
    if (!judged) {
      this.logger.warn({ kbid: req.kbid, model, chars: text.length }, 'REMi judge did not answer with the JSON asked for; scored offline');
      return { outcome: 'failed', model, error: 'malformed' };
    }
    return { outcome: 'judged', model, ...judged };
  }
}
