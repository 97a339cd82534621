import {
  ContentSubjects,
  DomainError,
  ErrorCodes,
  fitJudgeContext,
  REMI_JUDGE_LIMITS,
  type RemiJudgeError,
  type RemiJudgeResponse,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { ReportingOptions } from '../reporting.tokens';
import { REMI_LIMITS, type RemiInput, type RemiScores } from './remi-scorer';
import { sentences } from './remi-text';

/** How long a KB found without a generative provider is not asked about again. */
const NO_PROVIDER_TTL_MS = 60_000;
const JUDGE_ERRORS: readonly RemiJudgeError[] = [
  'timeout',
  'rate_limited',
  'auth',
  'provider',
  'bad_request',
  'aborted',
  'malformed',
  'config',
  'unavailable',
];

export type JudgeOutcome =
  /** Scored by the KB's model; `scorer` is `llm:<model>`. */
  | { kind: 'judged'; scorer: string; scores: RemiScores }
  /** To be scored offline: the judge was not asked (`error` null) or failed (why). */
  | { kind: 'offline'; error: RemiJudgeError | null };

const isScore = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 5;

/**
 * The reporting side of the REMi LLM judge (docs/remi.md): asks the content service
 * (`content.remi.judge`) to grade a stored answer with the KB's generative model, within a time
 * limit, with the context cut to the judge's bounds; checks what comes back. The provider and its
 * keys stay in content. Answers that failed, found no context or are empty are not sent (scored
 * offline), nor are those of a KB known, for a minute, to have no provider.
 */
export class RemiJudgeClient {
  private readonly noProvider = new Map<string, number>();

  constructor(
    private readonly bus: MessageBus,
    private readonly options: Pick<ReportingOptions, 'remiJudge' | 'remiJudgeTimeoutMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  async judge(kbid: string, input: RemiInput & { status: string }): Promise<JudgeOutcome> {
    if (!this.options.remiJudge || input.status !== 'SUCCESS' || input.noContext || !input.answer.trim()) {
      return { kind: 'offline', error: null };
    }
    const until = this.noProvider.get(kbid);
    if (until !== undefined && until > this.now()) return { kind: 'offline', error: null };
    this.noProvider.delete(kbid);
    const said = sentences(input.answer, REMI_LIMITS.answerSentences).map((s) => s.slice(0, REMI_JUDGE_LIMITS.sentenceChars));
    const context = fitJudgeContext(input.context.slice(0, REMI_LIMITS.contextPieces));
    let res: RemiJudgeResponse;
    try {
      res = await this.bus.request(
        ContentSubjects.remiJudge,
        { kbid, question: input.question.slice(0, REMI_JUDGE_LIMITS.questionChars), sentences: said, context },
        { timeoutMs: this.options.remiJudgeTimeoutMs },
      );
    } catch (err) {
      return { kind: 'offline', error: err instanceof DomainError && err.code === ErrorCodes.BUS_TIMEOUT ? 'timeout' : 'unavailable' };
    }
    if (res?.outcome === 'no_provider') {
      if (this.noProvider.size > 10_000) this.noProvider.clear();
      this.noProvider.set(kbid, this.now() + NO_PROVIDER_TTL_MS);
      return { kind: 'offline', error: null };
    }
    if (res?.outcome === 'failed') return { kind: 'offline', error: JUDGE_ERRORS.includes(res.error) ? res.error : 'provider' };
    // The content service checks the judge's answer; what arrives here is checked again, as any input.
    const ok =
      res?.outcome === 'judged' &&
      typeof res.model === 'string' &&
      isScore(res.answer_relevance?.score) &&
      typeof res.answer_relevance.reason === 'string' &&
      Array.isArray(res.context_relevance) &&
      res.context_relevance.length === context.length &&
      res.context_relevance.every(isScore) &&
      Array.isArray(res.groundedness) &&
      res.groundedness.length === said.length &&
      res.groundedness.every(isScore);
    if (!ok) return { kind: 'offline', error: 'malformed' };
    return {
      kind: 'judged',
      scorer: `llm:${res.model.slice(0, 200)}`,
      scores: {
        answer_relevance: { score: res.answer_relevance.score, reason: res.answer_relevance.reason.slice(0, 500) },
        context_relevance: res.context_relevance,
        groundedness: res.groundedness,
      },
    };
  }
}
