import { Inject, Injectable } from '@nestjs/common';
import { AccountsSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { createGenerator, GenerationError, type ChatTurn, type Generator } from './generation';
import type { FindPlan } from '../search/find/find-plan';
import { rephraseByRules, rephraseQuery } from './rephrase';

export type KbConfig = Record<string, unknown>;

/** The KB's generative model and query rephrasing, shared by /ask (and its prequeries), /find and /search. */
@Injectable()
export class QueryRephraser {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The KB's learning configuration (empty when the accounts service cannot say). */
  kbConfig(kbid: string, signal?: AbortSignal): Promise<KbConfig> {
    return this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbid }, { signal }).catch(() => ({}) as KbConfig);
  }

  /** The request's model (else the KB's) served by the KB's provider keys; throws GENERATIVE_CONFIG_INVALID. */
  generator(config: KbConfig, generativeModel?: string): Generator {
    return createGenerator({
      generative_model: generativeModel ?? (config['generative_model'] as string | undefined),
      user_keys: (config['user_keys'] as Record<string, Record<string, unknown>> | null | undefined) ?? null,
    });
  }

  /**
   * The question rephrased for retrieval. A provider that fails or times out does not fail the
   * request: the rules rephrase it instead (logged), and the answer step reports the provider.
   */
  async rephrase(
    generator: Generator,
    req: { kbid: string; question: string; history: ChatTurn[]; prompt?: string; signal?: AbortSignal },
  ): Promise<string> {
    try {
      return (await rephraseQuery(generator, req)).query;
    } catch (err) {
      req.signal?.throwIfAborted();
      if (!(err instanceof GenerationError)) throw err;
      this.logger.warn(
        { kbid: req.kbid, kind: err.kind, err: err.message },
        'query rephrasing by the provider failed; rephrased by the rules',
      );
      return rephraseByRules(req.question, req.history);
    }
  }

  /**
   * A plan that asks `rephrase`: its query rewritten (by `generator`, else the request's model or
   * the KB's) with `history`; retrieval uses it from now on, and `originalQuery` keeps the caller's.
   */
  async rephrasePlan(
    plan: FindPlan,
    o: { generator?: Generator; generativeModel?: string; history?: ChatTurn[]; prompt?: string },
  ): Promise<void> {
    if (!plan.rephrase) return;
    const generator = o.generator ?? this.generator(await this.kbConfig(plan.kbid, plan.signal), o.generativeModel);
    const query = await this.rephrase(generator, {
      kbid: plan.kbid,
      question: plan.originalQuery ?? plan.query,
      history: o.history ?? [],
      prompt: o.prompt ?? plan.rephrase.prompt,
      signal: plan.signal,
    });
    plan.originalQuery ??= plan.query;
    plan.query = query;
  }
}
