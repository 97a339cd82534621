import { Inject, Injectable } from '@nestjs/common';
import { AccountsSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { createGenerator, GenerationError, type ChatTurn, type Generator } from './generation';
import { rephraseByRules, rephraseQuery } from './rephrase';

export type KbConfig = Record<string, unknown>;

/** The KB's generative model and query rephrasing, shared by /ask and /find. */
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
}
